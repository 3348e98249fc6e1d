// What a domain function receives: who acts, in which org, on which executor, at what time.
import type { Db, Executor } from '../db/db.js';

export interface Clock { now(): Date }
export const systemClock: Clock = { now: () => new Date() };

export type Actor =
  | { type: 'token'; userId: string; tokenId: string }
  | { type: 'session'; userId: string; sessionId: string }
  | { type: 'operator' }
  | { type: 'system'; job: string };

export interface OrgRef { id: string; slug: string; accountId: string; role: 'Owner' | 'Member' }

export interface Ctx {
  db: Db;
  clock: Clock;
  actor: Actor;
  /** Set on org-scoped requests. */
  org?: OrgRef;
}

export type Tx = Executor;

export function actorIdOf(actor: Actor): string | null {
  switch (actor.type) {
    case 'token': return actor.tokenId;
    case 'session': return actor.userId;
    case 'operator': return null;
    case 'system': return actor.job;
  }
}

export function userIdOf(actor: Actor): string | null {
  return actor.type === 'token' || actor.type === 'session' ? actor.userId : null;
}
