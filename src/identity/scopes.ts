// Token scopes (service-api.md, "API token auth" 2): `resource:action`, `write` implies `read`,
// `delete` and `execute` stand alone, `full_access` grants all, unknown strings are ignored.

export const SCOPE_RESOURCES = ['targets', 'channels', 'incidents', 'maintenance', 'status_page', 'variables', 'oncall'] as const;
export const SCOPE_ACTIONS = ['read', 'write', 'delete', 'execute'] as const;
export const FULL_ACCESS = 'full_access';

export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
export type ScopeAction = (typeof SCOPE_ACTIONS)[number];
export type Scope = `${ScopeResource}:${ScopeAction}`;

export function hasScope(granted: ReadonlySet<string>, needed: Scope): boolean {
  if (granted.has(FULL_ACCESS) || granted.has(needed)) return true;
  const [resource, action] = needed.split(':') as [ScopeResource, ScopeAction];
  return action === 'read' && granted.has(`${resource}:write`);
}
