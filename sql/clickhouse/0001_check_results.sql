-- One row per check run. Ordered by account and check so a report reads one contiguous range;
-- partitioned by month so retention drops whole parts. Metrics a type does not have are NULL.
-- {{retention_days}} is replaced with the validated integer setting CLICKHOUSE_RETENTION_DAYS.
CREATE TABLE IF NOT EXISTS check_results
(
    account_id UUID,
    check_id UUID,
    check_type LowCardinality(String),
    result_id UUID,
    started_at DateTime64(3, 'UTC'),
    stopped_at DateTime64(3, 'UTC'),
    run_location LowCardinality(String),
    has_failures Bool,
    has_errors Bool,
    is_degraded Bool,
    aborted Bool,
    attempts UInt8,
    response_time Nullable(Float64),
    status_code Nullable(UInt16),
    timing_wait Nullable(Float64),
    timing_dns Nullable(Float64),
    timing_tcp Nullable(Float64),
    timing_first_byte Nullable(Float64),
    timing_download Nullable(Float64),
    timing_total Nullable(Float64),
    timing_connection Nullable(Float64),
    timing_data Nullable(Float64),
    ttfb Nullable(Float64),
    fcp Nullable(Float64),
    lcp Nullable(Float64),
    cls Nullable(Float64),
    tbt Nullable(Float64),
    console_errors Nullable(UInt32),
    network_errors Nullable(UInt32),
    user_script_errors Nullable(UInt32),
    document_errors Nullable(UInt32),
    packet_loss Nullable(Float64),
    latency_min Nullable(Float64),
    latency_max Nullable(Float64),
    latency_avg Nullable(Float64),
    latency_stddev Nullable(Float64),
    inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(started_at)
ORDER BY (account_id, check_id, started_at)
TTL toDateTime(started_at) + INTERVAL {{retention_days}} DAY
-- Lets a retried batch (same insert_deduplication_token) be dropped instead of inserted twice.
SETTINGS non_replicated_deduplication_window = 10000
