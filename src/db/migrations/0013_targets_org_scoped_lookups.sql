-- Every lookup by tag, variable reference or channel binding is scoped to one org, which
-- targets_org_idx narrows to that org's rows; GIN indexes across all orgs only cost on every
-- write (a 10,000-monitor bulk create spent a fifth of its insert time maintaining them).
DROP INDEX targets_tags_idx;
DROP INDEX targets_variable_refs_idx;
DROP INDEX targets_alert_channel_ids_idx;
