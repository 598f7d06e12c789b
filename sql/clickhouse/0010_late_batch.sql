-- With ROLLUPS=ticks (docs/analytics.md, "Rollups"): a run stored after the rollups' horizon had passed its start is
-- rolled once it is stored, and this names the insert that stored it (its deduplication token): the rows of one
-- insert are rolled together under a token made of that name, so rolling them again (a repeat after a crash) is
-- dropped. '' for every other run: a tick rolls it. The bloom filter finds one insert's rows without a scan.
ALTER TABLE check_results ADD COLUMN IF NOT EXISTS late_batch String DEFAULT '';

ALTER TABLE check_results ADD INDEX IF NOT EXISTS late_batch_bloom late_batch TYPE bloom_filter(0.01) GRANULARITY 1
