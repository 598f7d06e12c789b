-- A run that landed while a maintenance window paused its check: accepted and kept, and marked.
ALTER TABLE check_results ADD COLUMN IF NOT EXISTS in_maintenance Bool DEFAULT false
