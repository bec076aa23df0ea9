//! The worker pool: one worker per device, exactly one result per task.
