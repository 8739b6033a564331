/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the highorder_stress module: one per allocation attempt
 * and one per late expiry of the timer probe.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM highorder_stress

#if !defined(_HIGHORDER_STRESS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _HIGHORDER_STRESS_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(highorder_stress_alloc,
	    TP_PROTO(unsigned int order, const char *mode, u64 latency_ns,
		     bool success),
	    TP_ARGS(order, mode, latency_ns, success),
	    TP_STRUCT__entry(__field(unsigned int, order)
			     __array(char, mode, 12)
			     __field(u64, latency_ns)
			     __field(bool, success)
			     __field(int, cpu)),
	    TP_fast_assign(__entry->order = order;
			   strscpy(__entry->mode, mode, sizeof(__entry->mode));
			   __entry->latency_ns = latency_ns;
			   __entry->success = success;
			   __entry->cpu = raw_smp_processor_id();),
	    TP_printk("order=%u mode=%s latency_ns=%llu success=%d cpu=%d",
		      __entry->order, __entry->mode, __entry->latency_ns,
		      __entry->success, __entry->cpu)
);

TRACE_EVENT(highorder_stress_probe_late,
	    TP_PROTO(u64 lateness_ns, u64 period_ns),
	    TP_ARGS(lateness_ns, period_ns),
	    TP_STRUCT__entry(__field(u64, lateness_ns)
			     __field(u64, period_ns)
			     __field(int, cpu)),
	    TP_fast_assign(__entry->lateness_ns = lateness_ns;
			   __entry->period_ns = period_ns;
			   __entry->cpu = raw_smp_processor_id();),
	    TP_printk("lateness_ns=%llu period_ns=%llu cpu=%d",
		      __entry->lateness_ns, __entry->period_ns, __entry->cpu)
);

#endif /* _HIGHORDER_STRESS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE highorder_stress_trace
#include <trace/define_trace.h>
