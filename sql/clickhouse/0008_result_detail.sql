-- What a run reported beyond its metrics: the anchor's per-type result object (apiCheckResult with request,
-- response, timing phases and assertions; tcpCheckResult, dnsCheckResult, …) as JSON. Read only when one result
-- is asked for; compressed well by ZSTD (runs of one check repeat themselves).
ALTER TABLE check_results
    ADD COLUMN IF NOT EXISTS detail String DEFAULT '' CODEC(ZSTD(3))
