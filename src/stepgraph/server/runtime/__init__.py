"""Running graphs for the API: the run queue, the per-run event log and the executor."""
