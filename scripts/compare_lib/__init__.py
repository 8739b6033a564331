# SPDX-License-Identifier: GPL-2.0
"""The package behind scripts/compare: one job per module (schema, read,
stats, report, plots)."""
