-- The built-in runner that serves `local` drives headless Chromium for flow checks, so the seeded
-- region is flow-capable (0001 seeded it before flows were placed by region).
UPDATE regions SET flow_capable = true WHERE id = 'local';
