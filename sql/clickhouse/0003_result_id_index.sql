-- Ingest drops runs that already landed (src/ingest/dedup.ts) with one query per batch over the batch's
-- checks and time span. Fresh runs sit in the newest granule of each check, so without an index that query
-- reads a whole granule per check in the batch; a bloom filter on result_id lets it skip granules that
-- cannot hold any of the batch's ids (bench/README.md, scenario 5). Parts written before the index existed
-- get it with ALTER TABLE check_results MATERIALIZE INDEX result_id_bloom.
ALTER TABLE check_results ADD INDEX IF NOT EXISTS result_id_bloom result_id TYPE bloom_filter(0.01) GRANULARITY 1
