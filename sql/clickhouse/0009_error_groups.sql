-- Error groups (docs/analytics.md): failed runs grouped per check by their error message with its variable parts
-- masked (ANSI colours dropped; URLs keep scheme and host; UUIDs, times, long hex ids and numbers become
-- placeholders), with first and last seen, how many runs and where. Filled at insert time by the view below from
-- the first error the run's result object names (`<type>CheckResult.errors[0].message`, else the API check's
-- `requestError`). Runs stored before the view existed are not grouped.
CREATE TABLE IF NOT EXISTS check_error_groups
(
    account_id UUID,
    check_id UUID,
    error_hash String,
    first_seen SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_seen SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
    occurrences SimpleAggregateFunction(sum, UInt64),
    cleaned_message SimpleAggregateFunction(any, String),
    raw_message SimpleAggregateFunction(anyLast, String),
    locations SimpleAggregateFunction(groupUniqArrayArray, Array(String))
)
ENGINE = AggregatingMergeTree
ORDER BY (account_id, check_id, error_hash);

CREATE MATERIALIZED VIEW IF NOT EXISTS check_error_groups_mv TO check_error_groups AS
SELECT
    account_id, check_id, lower(hex(cityHash64(msg_clean))) AS error_hash,
    min(started_at) AS first_seen, max(started_at) AS last_seen, count() AS occurrences,
    any(msg_clean) AS cleaned_message, anyLast(msg_raw) AS raw_message, groupUniqArray(run_location) AS locations
FROM
(
    SELECT account_id, check_id, started_at, run_location, msg_raw,
        substringUTF8(trimBoth(replaceRegexpAll(replaceRegexpAll(replaceRegexpAll(replaceRegexpAll(replaceRegexpAll(replaceRegexpAll(replaceRegexpAll(
            msg_raw,
            '\x1b\\[[0-9\\x3b]*m', ''),
            '(https?://[^/\\s\'"<>]+)[^\\s\'"<>]*', '\\1/…'),
            '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<uuid>'),
            '\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?', '<time>'),
            '\\b[0-9a-fA-F]{12,}\\b', '<id>'),
            '\\d+', '<n>'),
            '\\s+', ' ')), 1, 1000) AS msg_clean
    FROM
    (
        SELECT account_id, check_id, started_at, run_location,
            substringUTF8(coalesce(
                nullIf(JSONExtractString(detail, 'browserCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'multiStepCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'playwrightCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'agenticCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'apiCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'apiCheckResult', 'requestError'), ''),
                nullIf(JSONExtractString(detail, 'tcpCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'dnsCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'icmpCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'sslCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'grpcCheckResult', 'errors', 1, 'message'), ''),
                nullIf(JSONExtractString(detail, 'tracerouteCheckResult', 'errors', 1, 'message'), ''),
                ''), 1, 4000) AS msg_raw
        FROM check_results
        WHERE has_failures AND detail != ''
    )
    WHERE msg_raw != ''
)
GROUP BY account_id, check_id, error_hash
