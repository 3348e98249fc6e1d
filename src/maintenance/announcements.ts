// Where a maintenance window's updates go besides the window itself (monitoring-api.md, Events 2:
// "Maintenance updates posted on a window are shown on the status page and sent to subscribers").
// Status pages read windows and their updates from the store; their subscribers hear through the
// listeners registered here, which status pages will register. A listener runs in the transaction
// that records the update, so it can queue its own deliveries (an outbox) that commit with it.
import type { Executor } from '../db/db.js';

export interface MaintenanceUpdateNews {
  orgId: string;
  windowId: string;
  /** The monitors the window covers. */
  targetIds: readonly string[];
  updateId: string;
  message: string;
  at: Date;
}

export type MaintenanceListener = (tx: Executor, news: MaintenanceUpdateNews) => Promise<void>;

const listeners = new Set<MaintenanceListener>();

/** Registers `listener`; the returned function removes it. */
export function onMaintenanceUpdate(listener: MaintenanceListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function announceMaintenanceUpdate(tx: Executor, news: MaintenanceUpdateNews): Promise<void> {
  for (const listener of listeners) await listener(tx, news);
}
