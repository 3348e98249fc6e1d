// The rules of variables (service-api.md, "Variable"): key pattern and uniqueness, secrets sealed
// at rest and never read back, rotation, and no deletion while a monitor references the variable.
import type { Db, Executor } from '../db/db.js';
import { writeAudit } from '../shared/audit.js';
import type { Actor, OrgRef } from '../shared/context.js';
import { AppError, notFound } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Sealer } from '../shared/seal.js';
import { countVariableUsage, type VariableKind } from './references.js';
import { VARIABLE_KEY_PATTERN, VARIABLE_KEY_RE, type CreateVariable, type RotateVariable, type VariableT } from './schema.js';
import {
  deleteVariableRow, getVariableRow, insertVariable, listVariableRows, listVariableValues, updateVariableValue,
  type StoredValue, type VariableRow,
} from './store.js';

export interface VariablesCtx {
  db: Db;
  actor: Actor;
  org: OrgRef;
  sealer: Sealer;
  /** Judges a plain variable's new value where monitors use it (in the rotation's transaction, after its update); throws to refuse. */
  checkRotation?: (tx: Executor, key: string) => Promise<void>;
}

/** The one mapping from a row to the API object: a secret's value is never read back. */
export function toVariable(row: VariableRow, usedBy: number): VariableT {
  return {
    id: row.id, key: row.key, is_secret: row.is_secret, value: row.is_secret ? null : row.value, used_by: usedBy,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

function storedValue(sealer: Sealer, isSecret: boolean, value: string): StoredValue {
  return isSecret ? { value: null, sealed_value: sealer.seal(value) } : { value, sealed_value: null };
}

const withUsage = async (db: Executor, row: VariableRow): Promise<VariableT> =>
  toVariable(row, await countVariableUsage(db, row.org_id, row.key));

export async function listVariables(ctx: VariablesCtx, page: { limit: number; offset: number }) {
  const { rows, total } = await listVariableRows(ctx.db, ctx.org.id, page);
  const variables: VariableT[] = [];
  for (const row of rows) variables.push(await withUsage(ctx.db, row));
  return { variables, total, limit: page.limit, offset: page.offset };
}

export async function getVariableInOrg(ctx: VariablesCtx, id: string): Promise<VariableT> {
  const row = await getVariableRow(ctx.db, ctx.org.id, id);
  if (!row) throw notFound('variable');
  return withUsage(ctx.db, row);
}

export async function createVariable(ctx: VariablesCtx, input: CreateVariable): Promise<VariableT> {
  if (!VARIABLE_KEY_RE.test(input.key)) {
    throw new AppError(400, 'INVALID_VARIABLE_KEY', `key must match ${VARIABLE_KEY_PATTERN}`, { field: 'key' });
  }
  const isSecret = input.is_secret ?? false;
  return ctx.db.transaction(async (tx) => {
    const row = await insertVariable(tx, {
      id: newId(), orgId: ctx.org.id, key: input.key, isSecret, ...storedValue(ctx.sealer, isSecret, input.value),
    });
    if (!row) throw new AppError(409, 'VARIABLE_KEY_EXISTS', `this org already has a variable "${input.key}"`, { field: 'key' });
    await writeAudit(tx, ctx.actor, {
      action: 'variable.created', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'variable', entityId: row.id,
      details: { key: row.key, is_secret: row.is_secret },
    });
    return withUsage(tx, row);
  });
}

/** Replaces the value; `is_secret` stays as created. */
export async function rotateVariable(ctx: VariablesCtx, id: string, input: RotateVariable): Promise<VariableT> {
  return ctx.db.transaction(async (tx) => {
    const current = await getVariableRow(tx, ctx.org.id, id, 'update');
    if (!current) throw notFound('variable');
    const row = (await updateVariableValue(tx, ctx.org.id, id, storedValue(ctx.sealer, current.is_secret, input.value)))!;
    // A secret never fills a URL (references.ts), so only a plain value can change where a check goes.
    if (!row.is_secret) await ctx.checkRotation?.(tx, row.key);
    await writeAudit(tx, ctx.actor, {
      action: 'variable.rotated', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'variable', entityId: row.id,
      details: { key: row.key, is_secret: row.is_secret },
    });
    return withUsage(tx, row);
  });
}

/** 409 `VARIABLE_IN_USE` while any monitor references it; the row lock keeps a new reference from slipping in. */
export async function deleteVariable(ctx: VariablesCtx, id: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const row = await getVariableRow(tx, ctx.org.id, id, 'update');
    if (!row) throw notFound('variable');
    const usedBy = await countVariableUsage(tx, ctx.org.id, row.key);
    if (usedBy > 0) {
      throw new AppError(409, 'VARIABLE_IN_USE', `{{${row.key}}} is referenced by ${usedBy} monitor${usedBy === 1 ? '' : 's'}; remove the references first`);
    }
    await deleteVariableRow(tx, ctx.org.id, id);
    await writeAudit(tx, ctx.actor, {
      action: 'variable.deleted', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'variable', entityId: row.id,
      details: { key: row.key, is_secret: row.is_secret },
    });
  });
}

/**
 * The org's variable values by key, secrets opened, for substituting references before a check
 * runs. A secret sealed under a key that is no longer configured has no value here: a check
 * referencing it does not run (probes/resolve-spec.ts `runnableSpec`).
 */
export async function resolveVariableValues(db: Executor, sealer: Sealer, orgId: string): Promise<OrgVariables> {
  const values = new Map<string, string>();
  const secrets = new Set<string>();
  for (const row of await listVariableValues(db, orgId)) {
    if (row.is_secret) secrets.add(row.key);
    const value = row.is_secret ? sealer.open(row.sealed_value!) : row.value;
    if (value !== null) values.set(row.key, value);
  }
  return { values, secrets };
}

/** An org's variables as checks use them: the values (secrets opened), and which keys are secret. */
export interface OrgVariables { values: ReadonlyMap<string, string>; secrets: ReadonlySet<string> }

export const NO_VARIABLES: OrgVariables = { values: new Map(), secrets: new Set() };

/** What a write may read of the org's variables: every key with its kind, and the plain values (never a secret's). */
export interface VariableSnapshot { kinds: VariableKind[]; plain: ReadonlyMap<string, string> }

/**
 * Read when a write validates a field with its references filled in (a monitor's URL, whose scheme
 * and host may come from a variable). Secrets stay sealed: such a field may not reference one.
 */
export async function snapshotVariables(db: Executor, orgId: string): Promise<VariableSnapshot> {
  const rows = await listVariableValues(db, orgId);
  const plain = new Map<string, string>();
  for (const row of rows) if (!row.is_secret && row.value !== null) plain.set(row.key, row.value);
  return { kinds: rows.map(({ key, is_secret }) => ({ key, is_secret })), plain };
}
