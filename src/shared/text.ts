// Free text a person types (names, titles, messages): stored trimmed; whitespace alone is refused.
import { AppError } from './errors.js';

/** `value` trimmed; 400 `VALIDATION_FAILED` naming `field` when nothing is left. */
export function requiredText(value: string, field: string): string {
  const trimmed = value.trim();
  if (!trimmed) throw new AppError(400, 'VALIDATION_FAILED', `${field}: must not be blank`, { field });
  return trimmed;
}
