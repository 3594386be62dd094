"""Running hybrid tests: results, test records and figures of a run."""
