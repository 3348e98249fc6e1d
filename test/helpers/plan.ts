// What a statement read, from `EXPLAIN (ANALYZE, FORMAT JSON)`: for tests that hold a statement to
// reading only what it needs, whatever the size of the table.
import type { Db } from '../../src/db/db.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/**
 * Runs `sql` under EXPLAIN ANALYZE with the planner's `disabled` kinds (`seqscan`, `bitmapscan`...)
 * off, so a small test table gets the plan a large one would, and returns every node of the plan.
 */
export async function executedPlan(db: Db, sql: string, params: readonly unknown[], disabled: readonly string[]): Promise<PlanNode[]> {
  const plan = await db.transaction(async (tx) => {
    for (const kind of disabled) await tx.exec(`SET LOCAL enable_${kind} = off`);
    const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
    return row!['QUERY PLAN'];
  });
  // `pg` parses the json column; PGlite may hand it over as text.
  const [root] = (typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{ Plan: PlanNode }>;
  const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
  return nodes(root!.Plan);
}
