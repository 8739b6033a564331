// SPDX-License-Identifier: GPL-2.0
/*
 * faults: fault in private anonymous memory one base page at a time, for
 * a while.  Each round maps MB MiB, asks for base pages (MADV_NOHUGEPAGE:
 * with THP "always" one fault would otherwise map 512 pages), writes one
 * byte in each page, which is a fault and an order-0 allocation, and
 * unmaps the range, which frees them.  Rounds go on until SECONDS have
 * passed on CLOCK_MONOTONIC (guest time under QEMU's icount).
 *
 * usage: faults MB SECONDS
 * Prints "faults N" (pages written) and "seconds S" (time taken).
 * Built and run in the guest by scripts/workloads/pagefault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* parse_count: a positive decimal count, or exit 2 naming ARG */
static unsigned long parse_count(const char *name, const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (!*arg || *end || !v || v > 1UL << 20) {
		fprintf(stderr, "faults: bad %s '%s' (1 to %lu)\n", name, arg,
			1UL << 20);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long mb, seconds, faults = 0;
	long page = sysconf(_SC_PAGESIZE);
	double start, end;
	size_t len, off;
	char *p;

	if (argc != 3) {
		fprintf(stderr, "usage: faults MB SECONDS\n");
		return 2;
	}
	mb = parse_count("MB", argv[1]);
	seconds = parse_count("SECONDS", argv[2]);
	len = mb << 20;
	start = now();
	do {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("faults: mmap");
			return 1;
		}
		if (madvise(p, len, MADV_NOHUGEPAGE)) {
			perror("faults: madvise");
			return 1;
		}
		for (off = 0; off < len; off += page)
			p[off] = 1;
		faults += len / page;
		munmap(p, len);
		end = now();
	} while (end - start < seconds);
	printf("faults %lu\nseconds %.3f\n", faults, end - start);
	return 0;
}
