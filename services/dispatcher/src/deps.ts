import type { AddressPolicy } from './domain/addresses.ts';
import type { HintPublisher } from './hints.ts';

/** What the dispatcher's operations (and the operator CLI) need besides the database. */
export interface DispatcherDeps {
  /** Encrypts webhook secrets at rest. */
  masterKey: Buffer;
  /** Signs list cursors. */
  cursorKey: Buffer;
  policy: AddressPolicy;
  /** Wakes an attempt at once for a test event or a replay; without it the sweeper does within a second. */
  hints: Pick<HintPublisher, 'publish'>;
}
