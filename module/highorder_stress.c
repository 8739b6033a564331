// SPDX-License-Identifier: GPL-2.0
/*
 * highorder_stress - high-order non-blocking allocation stress and timer
 * lateness probe.
 *
 * The generator allocates high-order pages without direct reclaim, from
 * hardirq, softirq or kthread context, the way a NIC driver refilling
 * order-3 page-frag or jumbo-frame RX buffers does, keeps some of them for a
 * while (in-flight buffers) and frees them later.  Every attempt is timed.
 *
 * The probe is a periodic hrtimer per CPU that records how late each expiry
 * fires compared with its schedule: the delay an audio or network timer
 * sees while compaction or reclaim keeps interrupts disabled.
 *
 * Interface: /sys/kernel/debug/highorder_stress/, one file per knob, plus
 * "stats" and "histogram"; module parameters give the knobs' defaults.
 * See Documentation/highorder_stress.rst.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/llist.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#define CREATE_TRACE_POINTS
#include "highorder_stress_trace.h"

/*
 * Kernels before 6.8 call the largest order MAX_ORDER, and before 6.4 that
 * was one above it; module/Kbuild probes the headers for the difference.
 */
#ifdef MAX_PAGE_ORDER
#define HS_MAX_ORDER MAX_PAGE_ORDER
#elif defined(HS_MAX_ORDER_INCLUSIVE)
#define HS_MAX_ORDER MAX_ORDER
#else
#define HS_MAX_ORDER (MAX_ORDER - 1)
#endif

/* log2 buckets of nanoseconds: bucket i counts values in [2^i, 2^(i+1)) */
#define HS_BUCKETS		40
#define HS_MIN_PERIOD_NS	10000ULL
#define HS_WRITE_MAX		256

/* in the order of their names; the first is the knob's default */
enum hs_mode { HS_MODE_FRAG, HS_MODE_ATOMIC, HS_MODE_NOWAIT, HS_MODE_NOKSWAPD };
#define HS_MODE_NAMES		"frag", "atomic", "nowait", "nokswapd"
static const char * const hs_mode_names[] = { HS_MODE_NAMES, NULL };

enum hs_context { HS_CTX_HARDIRQ, HS_CTX_SOFTIRQ, HS_CTX_THREAD };
#define HS_CONTEXT_NAMES	"hardirq", "softirq", "thread"
static const char * const hs_context_names[] = { HS_CONTEXT_NAMES, NULL };

/* ---- knobs ------------------------------------------------------------- */

enum hs_knob_type { HS_UINT, HS_BOOL, HS_NAME, HS_CPUS, HS_RUN, HS_PROBE };

/* what a knob cannot change under (EBUSY), and how modinfo says so */
#define HS_BUSY_NONE		0
#define HS_BUSY_GEN		BIT(0)
#define HS_BUSY_PROBE		BIT(1)
#define HS_BUSY_BOTH		(HS_BUSY_GEN | HS_BUSY_PROBE)
#define HS_BUSY_TEXT_NONE	""
#define HS_BUSY_TEXT_GEN	"; EBUSY while the generator runs"
#define HS_BUSY_TEXT_PROBE	"; EBUSY while the probe runs"
#define HS_BUSY_TEXT_BOTH	"; EBUSY while the generator or the probe runs"

/**
 * struct hs_knob - one knob: a module parameter and a file in debugfs
 * @type:	how a value is parsed
 * @value:	the variable the knob sets: an unsigned int for HS_UINT, a
 *		bool for HS_BOOL, an unsigned int index into @names for
 *		HS_NAME; NULL for HS_CPUS, HS_RUN and HS_PROBE, which act on
 *		the generator's and the probe's own state
 * @min:	smallest valid value (HS_UINT)
 * @max:	largest valid value (HS_UINT)
 * @names:	valid names, NULL-terminated (HS_NAME)
 * @busy:	HS_BUSY_* flags
 */
struct hs_knob {
	enum hs_knob_type type;
	void *value;
	unsigned int min, max;
	const char * const *names;
	unsigned int busy;
};

static const struct kernel_param_ops hs_knob_ops;

/*
 * Each knob is declared once, here: hs_knob() makes its descriptor and a
 * module parameter that points at it, with its description for modinfo.
 * The parameter sets the knob at load; hs_init() gives every parameter
 * with hs_knob_ops a debugfs file, which changes it at run time.  The
 * wrappers below declare the variable, hs_<name>, with its default.
 */
#define hs_knob(_name, _type, _value, _min, _max, _names, _busy, _desc)	\
	static struct hs_knob hs_knob_##_name = {			\
		.type = _type, .value = _value, .min = _min, .max = _max, \
		.names = _names, .busy = HS_BUSY_##_busy,		\
	};								\
	module_param_cb(_name, &hs_knob_ops, &hs_knob_##_name, 0444);	\
	MODULE_INFO(parm, #_name ":" _desc HS_BUSY_TEXT_##_busy)

/* an unsigned int knob, hs_<name>, in [_min, _max]; modinfo says so */
#define hs_uint(_name, _init, _min, _max, _busy, _desc)		\
	static unsigned int hs_##_name = _init;				\
	hs_knob(_name, HS_UINT, &hs_##_name, _min, _max, NULL, _busy,	\
		_desc " (" __stringify(_min) ".." __stringify(_max)	\
		", default " __stringify(_init) ")")

#define hs_bool(_name, _init, _busy, _desc)				\
	static bool hs_##_name = _init;					\
	hs_knob(_name, HS_BOOL, &hs_##_name, 0, 1, NULL, _busy,	\
		_desc " (0 or 1, default " __stringify(_init) ")")

/*
 * A knob, hs_<name>, that names one of _list (hs_<name>_names[]): it
 * holds the name's index, 0 by default
 */
#define hs_name(_name, _list, _busy, _desc)				\
	static unsigned int hs_##_name;					\
	hs_knob(_name, HS_NAME, &hs_##_name, 0, 0, hs_##_name##_names,	\
		_busy, _desc ", one of " __stringify(_list)		\
		" (default: the first)")

/* a knob that acts on the generator's or the probe's state */
#define hs_action(_name, _type, _busy, _desc)				\
	hs_knob(_name, _type, NULL, 0, 0, NULL, _busy, _desc)

hs_uint(order, 3, 1, HS_MAX_ORDER, GEN, "allocation order");

hs_name(mode, HS_MODE_NAMES, GEN, "gfp flags");
hs_name(context, HS_CONTEXT_NAMES, GEN, "where the allocations run");

hs_uint(rate, 1000, 1, 1000000, GEN,
	"allocation attempts per second per CPU");
hs_uint(burst, 1, 1, 1024, GEN,
	"attempts per tick; ticks are burst / rate seconds apart, and run=1 is EINVAL below 10 us");
hs_action(cpus, HS_CPUS, BOTH,
	  "CPU list of the generator and the probe (default: all online)");
hs_uint(hold, 0, 0, 1048576, GEN,
	"allocations kept per CPU in a ring, each new one freeing the oldest; 0 frees at once");
hs_uint(max_held_mb, 0, 0, 1048575, GEN,
	"cap on memory held, MiB, split evenly over the CPUs; 0 means 1/8 of RAM; an attempt past it counts as a skip");
hs_uint(duration_ms, 0, 0, 86400000, GEN,
	"the generator stops itself after this long; 0 runs until run=0");
hs_bool(warn, 0, GEN, "1 drops __GFP_NOWARN: failures warn");
hs_uint(probe_period_us, 1000, 10, 1000000, PROBE,
	"probe timer period, us (5333 for a 48 kHz, 256-frame period)");
hs_uint(probe_threshold_us, 1000, 1, 10000000, PROBE,
	"expiries later than this, us, count as late and fire the probe_late tracepoint");
hs_action(run, HS_RUN, NONE,
	  "1 starts the generator (EBUSY if it runs), 0 stops it; reads whether it runs");
hs_action(probe, HS_PROBE, NONE,
	  "1 starts the timer probe (EBUSY if it runs), 0 stops it; reads whether it runs");

/* ---- state ------------------------------------------------------------- */

struct hs_hist {
	u64 count;
	u64 sum_ns;
	u64 min_ns;
	u64 max_ns;
	u64 bucket[HS_BUCKETS];
};

struct hs_order_stats {
	u64 attempts;
	u64 successes;
	u64 failures;
	u64 skips;
	struct hs_hist latency;
};

struct hs_probe_stats {
	u64 late;
	u64 missed;
	struct hs_hist lateness;
};

/*
 * Everything a CPU touches on the hot path lives in its own per-CPU area:
 * counters are summed only when a reader asks.  Each area has one writer
 * context at a time (the generator's, the probe's hrtimer, or the free
 * worker for @held_pages, hence atomic there).
 */
struct hs_cpu {
	unsigned int cpu;
	struct hrtimer gen_timer;
	struct task_struct *thread;
	struct page **ring;
	unsigned int ring_next;
	unsigned long cap_pages;
	atomic_long_t held_pages;
	struct llist_head to_free;
	struct work_struct free_work;
	struct hs_order_stats orders[HS_MAX_ORDER + 1];
	struct hrtimer probe_timer;
	struct hs_probe_stats probe;
};

static struct hs_cpu __percpu *hs_cpus;
static DEFINE_MUTEX(hs_lock);		/* knobs, start and stop */
/* static, so that a cpus= parameter can set it before hs_init() */
static struct cpumask hs_cpumask_bits;
static struct cpumask *const hs_cpumask = &hs_cpumask_bits;
static bool hs_cpus_set;		/* cpus= given, or written */
static bool hs_loaded;			/* hs_init() done: run and probe act */
static bool hs_run_at_load;		/* run=1 and probe=1 at load */
static bool hs_probe_at_load;
static bool gen_running;
static bool probe_running;
static u64 gen_period_ns;
static u64 probe_period_ns;
static u64 probe_threshold_ns;
static gfp_t gen_gfp;
static unsigned int gen_order;
static struct delayed_work auto_stop_work;
static struct dentry *hs_dir;

/* ---- statistics helpers ------------------------------------------------ */

static void hs_hist_add(struct hs_hist *h, u64 ns)
{
	unsigned int b = ns ? min_t(unsigned int, ilog2(ns), HS_BUCKETS - 1) : 0;

	if (!h->count || ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->count++;
	h->sum_ns += ns;
	h->bucket[b]++;
}

static void hs_hist_merge(struct hs_hist *sum, const struct hs_hist *h)
{
	unsigned int b;

	if (!h->count)
		return;
	if (!sum->count || h->min_ns < sum->min_ns)
		sum->min_ns = h->min_ns;
	sum->max_ns = max(sum->max_ns, h->max_ns);
	sum->count += h->count;
	sum->sum_ns += h->sum_ns;
	for (b = 0; b < HS_BUCKETS; b++)
		sum->bucket[b] += h->bucket[b];
}

static void hs_order_merge(struct hs_order_stats *sum,
			   const struct hs_order_stats *s)
{
	sum->attempts += s->attempts;
	sum->successes += s->successes;
	sum->failures += s->failures;
	sum->skips += s->skips;
	hs_hist_merge(&sum->latency, &s->latency);
}

/* ---- the generator ----------------------------------------------------- */

/*
 * The gfp flags of each mode.  "frag" is what skb_page_frag_refill() asks
 * for with an atomic socket allocation: no direct reclaim, compound, no
 * retries, no warning, but kswapd is still woken.
 */
static gfp_t hs_mode_gfp(unsigned int m)
{
	gfp_t gfp;

	switch (m) {
	case HS_MODE_FRAG:
		gfp = GFP_ATOMIC | __GFP_COMP | __GFP_NORETRY;
		break;
	case HS_MODE_NOWAIT:
		gfp = GFP_NOWAIT;
		break;
	case HS_MODE_NOKSWAPD:
		gfp = GFP_ATOMIC & ~__GFP_KSWAPD_RECLAIM;
		break;
	default:
		gfp = GFP_ATOMIC;
		break;
	}
	return hs_warn ? gfp & ~__GFP_NOWARN : gfp | __GFP_NOWARN;
}

static void hs_free_work(struct work_struct *work)
{
	struct hs_cpu *c = container_of(work, struct hs_cpu, free_work);
	struct llist_node *node, *next;

	llist_for_each_safe(node, next, llist_del_all(&c->to_free)) {
		struct page *page = container_of((struct list_head *)node,
						 struct page, lru);

		__free_pages(page, gen_order);
		atomic_long_sub(1UL << gen_order, &c->held_pages);
	}
}

/*
 * Return a page the generator is done with.  In hardirq context the page
 * goes to a per-CPU list that a work item frees: drivers hand RX buffers
 * up the stack and they are freed later in softirq or process context, and
 * the hardirq handler stays short.
 */
static void hs_release(struct hs_cpu *c, struct page *page)
{
	if (in_hardirq()) {
		llist_add((struct llist_node *)&page->lru, &c->to_free);
		queue_work_on(c->cpu, system_percpu_wq, &c->free_work);
		return;
	}
	__free_pages(page, gen_order);
	atomic_long_sub(1UL << gen_order, &c->held_pages);
}

static void hs_attempt(struct hs_cpu *c)
{
	struct hs_order_stats *s = &c->orders[gen_order];
	unsigned long pages = 1UL << gen_order;
	struct page *page, *old;
	u64 t0, ns;

	s->attempts++;
	if (atomic_long_read(&c->held_pages) + pages > c->cap_pages) {
		s->skips++;
		return;
	}

	t0 = local_clock();
	page = alloc_pages(gen_gfp, gen_order);
	ns = local_clock() - t0;

	hs_hist_add(&s->latency, ns);
	trace_highorder_stress_alloc(gen_order, hs_mode_names[hs_mode], ns,
				     !!page);
	if (!page) {
		s->failures++;
		return;
	}
	s->successes++;
	atomic_long_add(pages, &c->held_pages);

	if (!c->ring) {
		hs_release(c, page);
		return;
	}
	old = c->ring[c->ring_next];
	c->ring[c->ring_next] = page;
	c->ring_next = (c->ring_next + 1) % hs_hold;
	if (old)
		hs_release(c, old);
}

static void hs_gen_burst(struct hs_cpu *c)
{
	unsigned int i;

	for (i = 0; i < hs_burst; i++)
		hs_attempt(c);
}

/*
 * A hard hrtimer's callback runs in hardirq context, where taking a
 * spinlock_t (zone->lock, the pcp lock) is invalid on PREEMPT_RT, and
 * lockdep's raw lock nesting check (PROVE_RAW_LOCK_NESTING, forced on
 * with PROVE_LOCKING where PREEMPT_RT is supported) reports it.  The
 * hardirq context is refused on PREEMPT_RT (hs_start_gen()); elsewhere a
 * spinlock_t spins and GFP_ATOMIC allocations from hardirq are valid, so
 * tell lockdep so for the burst, as debugobjects' fill_pool() does.
 */
static DEFINE_WAIT_OVERRIDE_MAP(hs_hardirq_alloc_map, LD_WAIT_CONFIG);

static enum hrtimer_restart hs_gen_timer_fn(struct hrtimer *t)
{
	struct hs_cpu *c = container_of(t, struct hs_cpu, gen_timer);

	if (in_hardirq()) {
		lock_map_acquire_try(&hs_hardirq_alloc_map);
		hs_gen_burst(c);
		lock_map_release(&hs_hardirq_alloc_map);
	} else {
		hs_gen_burst(c);
	}
	hrtimer_forward_now(t, ns_to_ktime(gen_period_ns));
	return HRTIMER_RESTART;
}

static int hs_gen_thread_fn(void *data)
{
	struct hs_cpu *c = data;
	ktime_t next = ktime_get();

	while (!kthread_should_stop()) {
		hs_gen_burst(c);
		next = ktime_add_ns(next, gen_period_ns);
		/* no catching up after a stall: that would be a burst storm */
		if (ktime_before(next, ktime_get()))
			next = ktime_get();
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule_hrtimeout(&next, HRTIMER_MODE_ABS);
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static void hs_timer_init(struct hrtimer *t, enum hrtimer_mode m,
			  enum hrtimer_restart (*fn)(struct hrtimer *))
{
#ifdef HS_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, CLOCK_MONOTONIC, m);
#else
	hrtimer_init(t, CLOCK_MONOTONIC, m);
	t->function = fn;
#endif
}

/* Runs on the target CPU: pinned hrtimers must be started there. */
static void hs_start_gen_timer_on_cpu(void *data)
{
	struct hs_cpu *c = data;
	enum hrtimer_mode m = hs_context == HS_CTX_SOFTIRQ ?
		HRTIMER_MODE_REL_PINNED_SOFT : HRTIMER_MODE_REL_PINNED_HARD;

	hs_timer_init(&c->gen_timer, m, hs_gen_timer_fn);
	hrtimer_start(&c->gen_timer, ns_to_ktime(gen_period_ns), m);
}

static unsigned long hs_cap_pages(void)
{
	unsigned long total = hs_max_held_mb ?
		(unsigned long)hs_max_held_mb << (20 - PAGE_SHIFT) :
		totalram_pages() / 8;

	return total / cpumask_weight(hs_cpumask);
}

/* Free what the generator holds on every CPU; nothing may run any more. */
static void hs_drain_all(void)
{
	unsigned int cpu, i;

	for_each_possible_cpu(cpu) {
		struct hs_cpu *c = per_cpu_ptr(hs_cpus, cpu);

		flush_work(&c->free_work);
		hs_free_work(&c->free_work);
		if (c->ring) {
			for (i = 0; i < hs_hold; i++)
				if (c->ring[i])
					hs_release(c, c->ring[i]);
			kvfree(c->ring);
			c->ring = NULL;
		}
		WARN_ON_ONCE(atomic_long_read(&c->held_pages));
	}
}

static void hs_stop_gen(void)
{
	unsigned int cpu;

	lockdep_assert_held(&hs_lock);
	if (!gen_running)
		return;
	for_each_cpu(cpu, hs_cpumask) {
		struct hs_cpu *c = per_cpu_ptr(hs_cpus, cpu);

		if (hs_context != HS_CTX_THREAD) {
			hrtimer_cancel(&c->gen_timer);
		} else if (c->thread) {
			kthread_stop(c->thread);
			put_task_struct(c->thread);
			c->thread = NULL;
		}
	}
	hs_drain_all();
	gen_running = false;
	pr_info("generator stopped\n");
}

static int hs_start_gen(void)
{
	unsigned int cpu;
	u64 period;

	lockdep_assert_held(&hs_lock);
	if (gen_running)
		return -EBUSY;
	/*
	 * On PREEMPT_RT, zone->lock and the pcp locks sleep, so the page
	 * allocator cannot be entered from a hard interrupt at all: the
	 * generator's hard hrtimer would hang the CPU.  softirq context runs
	 * in a thread there, as an RT kernel's network receive path does.
	 */
	if (IS_ENABLED(CONFIG_PREEMPT_RT) && hs_context == HS_CTX_HARDIRQ) {
		pr_warn("context hardirq: PREEMPT_RT cannot allocate pages in a hard interrupt; use softirq or thread\n");
		return -EOPNOTSUPP;
	}
	period = div_u64((u64)hs_burst * NSEC_PER_SEC, hs_rate);
	if (period < HS_MIN_PERIOD_NS) {
		pr_warn("rate %u with burst %u ticks every %llu ns; the minimum is %llu: raise burst\n",
			hs_rate, hs_burst, period, HS_MIN_PERIOD_NS);
		return -EINVAL;
	}
	gen_period_ns = period;
	gen_order = hs_order;
	gen_gfp = hs_mode_gfp(hs_mode);

	for_each_cpu(cpu, hs_cpumask) {
		struct hs_cpu *c = per_cpu_ptr(hs_cpus, cpu);

		c->cap_pages = hs_cap_pages();
		c->ring_next = 0;
		c->thread = NULL;
		if (hs_hold) {
			c->ring = kvcalloc(hs_hold, sizeof(*c->ring), GFP_KERNEL);
			if (!c->ring)
				goto nomem;
		}
	}

	gen_running = true;
	for_each_cpu(cpu, hs_cpumask) {
		struct hs_cpu *c = per_cpu_ptr(hs_cpus, cpu);
		struct task_struct *t;

		if (hs_context != HS_CTX_THREAD) {
			smp_call_function_single(cpu, hs_start_gen_timer_on_cpu,
						 c, 1);
			continue;
		}
		t = kthread_create_on_cpu(hs_gen_thread_fn, c, cpu,
					  "highorder_stress/%u");
		if (IS_ERR(t)) {
			hs_stop_gen();
			return PTR_ERR(t);
		}
		get_task_struct(t);
		c->thread = t;
		wake_up_process(t);
	}
	if (hs_duration_ms)
		schedule_delayed_work(&auto_stop_work,
				      msecs_to_jiffies(hs_duration_ms));
	pr_info("generator started: order %u mode %s context %s rate %u burst %u hold %u cpus %*pbl\n",
		gen_order, hs_mode_names[hs_mode],
		hs_context_names[hs_context], hs_rate, hs_burst, hs_hold,
		cpumask_pr_args(hs_cpumask));
	return 0;

nomem:
	hs_drain_all();
	return -ENOMEM;
}

static void hs_auto_stop(struct work_struct *work)
{
	mutex_lock(&hs_lock);
	hs_stop_gen();
	mutex_unlock(&hs_lock);
}

/* ---- the timer probe --------------------------------------------------- */

static enum hrtimer_restart hs_probe_timer_fn(struct hrtimer *t)
{
	struct hs_cpu *c = container_of(t, struct hs_cpu, probe_timer);
	ktime_t now = ktime_get();
	u64 late = ktime_to_ns(ktime_sub(now, hrtimer_get_expires(t)));
	u64 overruns;

	hs_hist_add(&c->probe.lateness, late);
	if (late > probe_threshold_ns) {
		c->probe.late++;
		trace_highorder_stress_probe_late(late, probe_period_ns);
	}
	overruns = hrtimer_forward(t, now, ns_to_ktime(probe_period_ns));
	if (overruns > 1)
		c->probe.missed += overruns - 1;
	return HRTIMER_RESTART;
}

static void hs_start_probe_on_cpu(void *data)
{
	struct hs_cpu *c = data;

	hs_timer_init(&c->probe_timer, HRTIMER_MODE_REL_PINNED_HARD,
		      hs_probe_timer_fn);
	hrtimer_start(&c->probe_timer, ns_to_ktime(probe_period_ns),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static int hs_start_probe(void)
{
	unsigned int cpu;

	lockdep_assert_held(&hs_lock);
	if (probe_running)
		return -EBUSY;
	probe_period_ns = (u64)hs_probe_period_us * NSEC_PER_USEC;
	probe_threshold_ns = (u64)hs_probe_threshold_us * NSEC_PER_USEC;
	probe_running = true;
	for_each_cpu(cpu, hs_cpumask)
		smp_call_function_single(cpu, hs_start_probe_on_cpu,
					 per_cpu_ptr(hs_cpus, cpu), 1);
	pr_info("probe started: period %u us on cpus %*pbl\n",
		hs_probe_period_us, cpumask_pr_args(hs_cpumask));
	return 0;
}

static void hs_stop_probe(void)
{
	unsigned int cpu;

	lockdep_assert_held(&hs_lock);
	if (!probe_running)
		return;
	for_each_cpu(cpu, hs_cpumask)
		hrtimer_cancel(&per_cpu_ptr(hs_cpus, cpu)->probe_timer);
	probe_running = false;
	pr_info("probe stopped\n");
}

/* ---- knob parsing and debugfs files ------------------------------------ */

/*
 * Parse @buf for @k without changing anything; the parsed value goes to
 * @val (or @mask for HS_CPUS).  Out-of-range numbers are -ERANGE, anything
 * else malformed is -EINVAL.
 */
static int hs_knob_parse(const struct hs_knob *k, const char *buf,
			 unsigned int *val, struct cpumask *mask)
{
	bool b;
	int ret;

	switch (k->type) {
	case HS_UINT:
		ret = kstrtouint(buf, 10, val);
		if (ret)
			return ret;
		return *val < k->min || *val > k->max ? -ERANGE : 0;
	case HS_BOOL:
	case HS_RUN:
	case HS_PROBE:
		if (strcmp(buf, "0") && strcmp(buf, "1"))
			return -EINVAL;
		ret = kstrtobool(buf, &b);
		*val = b;
		return ret;
	case HS_NAME:
		ret = match_string(k->names, -1, buf);
		if (ret < 0)
			return -EINVAL;
		*val = ret;
		return 0;
	case HS_CPUS:
		if (!*buf)
			return -EINVAL;
		ret = cpulist_parse(buf, mask);
		if (ret)
			return ret;
		if (cpumask_empty(mask) || !cpumask_subset(mask, cpu_online_mask))
			return -EINVAL;
		return 0;
	}
	return -EINVAL;
}

static int hs_knob_apply(const struct hs_knob *k, unsigned int val,
			 const struct cpumask *mask)
{
	if (((k->busy & HS_BUSY_GEN) && gen_running) ||
	    ((k->busy & HS_BUSY_PROBE) && probe_running))
		return -EBUSY;

	switch (k->type) {
	case HS_UINT:
	case HS_NAME:
		*(unsigned int *)k->value = val;
		return 0;
	case HS_BOOL:
		*(bool *)k->value = val;
		return 0;
	case HS_CPUS:
		cpumask_copy(hs_cpumask, mask);
		hs_cpus_set = true;
		return 0;
	case HS_RUN:
		/* a parameter at load: hs_init() starts it */
		if (!hs_loaded) {
			hs_run_at_load = val;
			return 0;
		}
		if (!val) {
			hs_stop_gen();
			return 0;
		}
		return hs_start_gen();
	case HS_PROBE:
		if (!hs_loaded) {
			hs_probe_at_load = val;
			return 0;
		}
		if (!val) {
			hs_stop_probe();
			return 0;
		}
		return hs_start_probe();
	}
	return -EINVAL;
}

/* Parse and apply under hs_lock; -EBUSY and parse errors change nothing. */
static int hs_knob_set(const struct hs_knob *k, const char *buf)
{
	cpumask_var_t mask;
	unsigned int val = 0;
	int ret;

	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	ret = hs_knob_parse(k, buf, &val, mask);
	if (!ret) {
		mutex_lock(&hs_lock);
		ret = hs_knob_apply(k, val, mask);
		mutex_unlock(&hs_lock);
	}
	free_cpumask_var(mask);
	return ret;
}

static ssize_t hs_knob_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	const struct hs_knob *k = file->private_data;
	char buf[HS_WRITE_MAX];
	bool stop_gen;
	int ret;

	if (*ppos || !len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';

	/*
	 * The auto-stop work takes hs_lock, so cancel it before taking the
	 * lock when this write may stop the generator.
	 */
	stop_gen = k->type == HS_RUN && !strcmp(buf, "0");
	if (stop_gen)
		cancel_delayed_work_sync(&auto_stop_work);
	ret = hs_knob_set(k, buf);
	return ret ? ret : len;
}

/* @k's value as text, with a newline, into @buf of @size bytes */
static int hs_knob_show(const struct hs_knob *k, char *buf, size_t size)
{
	int n;

	mutex_lock(&hs_lock);
	switch (k->type) {
	case HS_UINT:
		n = scnprintf(buf, size, "%u\n", *(unsigned int *)k->value);
		break;
	case HS_BOOL:
		n = scnprintf(buf, size, "%d\n", *(bool *)k->value);
		break;
	case HS_NAME:
		n = scnprintf(buf, size, "%s\n",
			      k->names[*(unsigned int *)k->value]);
		break;
	case HS_CPUS:
		n = scnprintf(buf, size, "%*pbl\n", cpumask_pr_args(hs_cpumask));
		break;
	case HS_RUN:
		n = scnprintf(buf, size, "%d\n", gen_running);
		break;
	case HS_PROBE:
		n = scnprintf(buf, size, "%d\n", probe_running);
		break;
	default:
		n = 0;
	}
	mutex_unlock(&hs_lock);
	return n;
}

static ssize_t hs_knob_read(struct file *file, char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[HS_WRITE_MAX];
	int n = hs_knob_show(file->private_data, buf, sizeof(buf));

	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations hs_knob_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = hs_knob_read,
	.write = hs_knob_write,
	.llseek = default_llseek,
};

/*
 * The module parameters: set at load only (they are read-only in sysfs),
 * with the checks a debugfs write gets; a bad one fails the load.
 */
static int hs_param_set(const char *val, const struct kernel_param *kp)
{
	int ret = hs_knob_set(kp->arg, val);

	if (ret)
		pr_err("invalid module parameter %s=%s\n", kp->name, val);
	return ret;
}

static int hs_param_get(char *buf, const struct kernel_param *kp)
{
	return hs_knob_show(kp->arg, buf, PAGE_SIZE);
}

static const struct kernel_param_ops hs_knob_ops = {
	.set = hs_param_set,
	.get = hs_param_get,
};

/* ---- results ----------------------------------------------------------- */

struct hs_totals {
	struct hs_order_stats orders[HS_MAX_ORDER + 1];
	struct hs_order_stats all;
	struct hs_probe_stats probe;
	unsigned long held_pages;
};

static struct hs_totals *hs_sum(void)
{
	struct hs_totals *t = kzalloc(sizeof(*t), GFP_KERNEL);
	unsigned int cpu, o;

	if (!t)
		return NULL;
	for_each_possible_cpu(cpu) {
		const struct hs_cpu *c = per_cpu_ptr(hs_cpus, cpu);

		for (o = 1; o <= HS_MAX_ORDER; o++) {
			hs_order_merge(&t->orders[o], &c->orders[o]);
			hs_order_merge(&t->all, &c->orders[o]);
		}
		t->probe.late += c->probe.late;
		t->probe.missed += c->probe.missed;
		hs_hist_merge(&t->probe.lateness, &c->probe.lateness);
		t->held_pages += atomic_long_read(&c->held_pages);
	}
	return t;
}

static void hs_show_order(struct seq_file *m, const char *prefix,
			  const struct hs_order_stats *s)
{
	const struct hs_hist *h = &s->latency;

	seq_printf(m, "%sattempts: %llu\n", prefix, s->attempts);
	seq_printf(m, "%ssuccesses: %llu\n", prefix, s->successes);
	seq_printf(m, "%sfailures: %llu\n", prefix, s->failures);
	seq_printf(m, "%sskips: %llu\n", prefix, s->skips);
	seq_printf(m, "%slatency_min_ns: %llu\n", prefix, h->min_ns);
	seq_printf(m, "%slatency_mean_ns: %llu\n", prefix,
		   h->count ? div64_u64(h->sum_ns, h->count) : 0);
	seq_printf(m, "%slatency_max_ns: %llu\n", prefix, h->max_ns);
}

static int hs_stats_show(struct seq_file *m, void *v)
{
	struct hs_totals *t = hs_sum();
	const struct hs_hist *p;
	char prefix[16];
	unsigned int o;

	if (!t)
		return -ENOMEM;
	p = &t->probe.lateness;
	seq_printf(m, "running: %d\n", READ_ONCE(gen_running));
	seq_printf(m, "probe_running: %d\n", READ_ONCE(probe_running));
	seq_printf(m, "held_pages: %lu\n", t->held_pages);
	hs_show_order(m, "", &t->all);
	for (o = 1; o <= HS_MAX_ORDER; o++) {
		snprintf(prefix, sizeof(prefix), "order%u_", o);
		hs_show_order(m, prefix, &t->orders[o]);
	}
	seq_printf(m, "probe_samples: %llu\n", p->count);
	seq_printf(m, "probe_late: %llu\n", t->probe.late);
	seq_printf(m, "probe_missed: %llu\n", t->probe.missed);
	seq_printf(m, "probe_lateness_min_ns: %llu\n", p->min_ns);
	seq_printf(m, "probe_lateness_mean_ns: %llu\n",
		   p->count ? div64_u64(p->sum_ns, p->count) : 0);
	seq_printf(m, "probe_lateness_max_ns: %llu\n", p->max_ns);
	kfree(t);
	return 0;
}

static int hs_stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, hs_stats_show, NULL);
}

/* Writing "0" or "reset" clears every counter; only when nothing runs. */
static ssize_t hs_stats_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	char buf[8];
	unsigned int cpu;
	int ret = 0;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (strcmp(strim(buf), "0") && strcmp(strim(buf), "reset"))
		return -EINVAL;

	mutex_lock(&hs_lock);
	if (gen_running || probe_running) {
		ret = -EBUSY;
	} else {
		for_each_possible_cpu(cpu) {
			struct hs_cpu *c = per_cpu_ptr(hs_cpus, cpu);

			memset(c->orders, 0, sizeof(c->orders));
			memset(&c->probe, 0, sizeof(c->probe));
		}
	}
	mutex_unlock(&hs_lock);
	return ret ? ret : len;
}

static const struct file_operations hs_stats_fops = {
	.owner = THIS_MODULE,
	.open = hs_stats_open,
	.read = seq_read,
	.write = hs_stats_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static void hs_show_hist(struct seq_file *m, const char *kind,
			 unsigned int o, const struct hs_hist *h)
{
	unsigned int b;

	for (b = 0; b < HS_BUCKETS; b++)
		if (h->bucket[b])
			seq_printf(m, "%s %u %llu %llu %llu\n", kind, o,
				   b ? 1ULL << b : 0, (2ULL << b) - 1,
				   h->bucket[b]);
}

static int hs_histogram_show(struct seq_file *m, void *v)
{
	struct hs_totals *t = hs_sum();
	unsigned int o;

	if (!t)
		return -ENOMEM;
	seq_puts(m, "# kind order low_ns high_ns count\n");
	for (o = 1; o <= HS_MAX_ORDER; o++)
		hs_show_hist(m, "alloc", o, &t->orders[o].latency);
	hs_show_hist(m, "probe", 0, &t->probe.lateness);
	kfree(t);
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(hs_histogram);

/* ---- module init / exit ------------------------------------------------ */

/* a debugfs file for each knob: each module parameter with hs_knob_ops */
static void __init hs_create_knob_files(void)
{
	const struct kernel_param *kp = THIS_MODULE->kp;
	unsigned int i;

	for (i = 0; i < THIS_MODULE->num_kp; i++, kp++)
		if (kp->ops == &hs_knob_ops)
			debugfs_create_file(kp->name, 0600, hs_dir, kp->arg,
					    &hs_knob_fops);
}

static int __init hs_init(void)
{
	unsigned int cpu;
	int ret;

	if (!hs_cpus_set)
		cpumask_copy(hs_cpumask, cpu_online_mask);
	hs_cpus = alloc_percpu(struct hs_cpu);
	if (!hs_cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct hs_cpu *c = per_cpu_ptr(hs_cpus, cpu);

		c->cpu = cpu;
		init_llist_head(&c->to_free);
		INIT_WORK(&c->free_work, hs_free_work);
	}
	INIT_DELAYED_WORK(&auto_stop_work, hs_auto_stop);

	hs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	hs_create_knob_files();
	debugfs_create_file("stats", 0600, hs_dir, NULL, &hs_stats_fops);
	debugfs_create_file("histogram", 0400, hs_dir, NULL,
			    &hs_histogram_fops);

	mutex_lock(&hs_lock);
	hs_loaded = true;
	ret = hs_probe_at_load ? hs_start_probe() : 0;
	if (!ret && hs_run_at_load)
		ret = hs_start_gen();
	if (ret)
		hs_stop_probe();
	mutex_unlock(&hs_lock);
	if (ret)
		goto out_debugfs;
	return 0;

out_debugfs:
	debugfs_remove_recursive(hs_dir);
	free_percpu(hs_cpus);
	return ret;
}

static void __exit hs_exit(void)
{
	/* no knob write can start anything once the files are gone */
	debugfs_remove_recursive(hs_dir);
	cancel_delayed_work_sync(&auto_stop_work);
	mutex_lock(&hs_lock);
	hs_stop_gen();
	hs_stop_probe();
	mutex_unlock(&hs_lock);
	free_percpu(hs_cpus);
}

module_init(hs_init);
module_exit(hs_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("High-order atomic allocation stress and timer lateness probe");
