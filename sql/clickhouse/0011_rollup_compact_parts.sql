-- The rollup tables' parts are written in ClickHouse's Compact format (all columns in one file) up to 1 GiB,
-- instead of Wide (a file per column) from 10 MiB. A rollup row is narrow in rows but wide in columns (about 150
-- in the hourly tier, 175 in the daily), and merging Wide parts opens a buffer per column of every part merged:
-- the daily tier's hourly merge at 50,000 checks held about 1.1 GB, whatever the merge's block size. Compact parts
-- are read and written through one buffer each: the same merge holds about 0.5 GB, and the tick costs less CPU
-- (docs/performance.md, "Rollup parts"). Parts written before keep their format until a merge rewrites them.
ALTER TABLE check_results_1h MODIFY SETTING min_bytes_for_wide_part = 1073741824;

ALTER TABLE check_results_1d MODIFY SETTING min_bytes_for_wide_part = 1073741824
