// Timestamps from requests. RFC 3339 admits a leap second (`23:59:60`) that Date cannot parse: it
// reads as the next second, as PostgreSQL reads it. Years outside 0001-9999 (UTC) cannot be stored
// or written back as RFC 3339, so they are refused rather than reaching the store.
import { AppError } from './errors.js';

const LEAP_SECOND = /^(.*\d\d:\d\d:)60(.*)$/;

/** The instant an RFC 3339 `date-time` names; 400 `VALIDATION_FAILED` naming `field` when it is not storable. */
export function instantOf(text: string, field: string): Date {
  const leap = LEAP_SECOND.exec(text);
  const at = leap ? new Date(new Date(`${leap[1]}59${leap[2]}`).getTime() + 1000) : new Date(text);
  const year = at.getUTCFullYear();
  if (Number.isNaN(at.getTime()) || year < 1 || year > 9999) {
    throw new AppError(400, 'VALIDATION_FAILED', `${field}: must be an RFC 3339 timestamp in the years 0001-9999 (UTC)`, { field });
  }
  return at;
}
