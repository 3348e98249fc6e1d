// `write_source` (monitoring-api.md, Conventions 8): read-only on targets, notification channels
// and maintenance windows, decided here from the request and restamped by every write.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

export const WRITE_SOURCES = ['ui', 'api', 'iac'] as const;
export type WriteSource = (typeof WRITE_SOURCES)[number];

/** How a client declares infrastructure-as-code (Terraform, Pulumi, scripts kept in git). */
export const CLIENT_HEADER = 'x-keepwatch-client';

export const WRITE_SOURCE_TEXT = `\`write_source\` is restamped by every write: \`iac\` when the request carries \`X-Keepwatch-Client: iac\` (infrastructure-as-code tools declare themselves so), else \`api\` for an API token.`;

export const WriteSourceSchema = Type.Union(WRITE_SOURCES.map((s) => Type.Literal(s)), {
  description: 'Server-set from the request: `api` for an API token, `iac` when the client sends `X-Keepwatch-Client: iac`, `ui` for the web app.',
});

export function writeSourceOf(request: Pick<FastifyRequest, 'headers'>): WriteSource {
  const header = request.headers[CLIENT_HEADER];
  return typeof header === 'string' && header.trim().toLowerCase() === 'iac' ? 'iac' : 'api';
}
