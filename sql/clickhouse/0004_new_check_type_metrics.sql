-- Metrics of the SSL, traceroute and gRPC monitors (agentic checks report responseTime).
ALTER TABLE check_results
    ADD COLUMN IF NOT EXISTS ssl_handshake_time Nullable(Float64),
    ADD COLUMN IF NOT EXISTS ssl_days_until_expiry Nullable(Float64),
    ADD COLUMN IF NOT EXISTS hop_count Nullable(UInt8),
    ADD COLUMN IF NOT EXISTS final_hop_latency Nullable(Float64),
    ADD COLUMN IF NOT EXISTS grpc_status_code Nullable(UInt8)
