/**
 * A background part of a service (a consumer, a scheduler, a purge) that must be stopped before connections close.
 * Its own module, so that the parts that are workers need not import service.ts, which imports them.
 */
export interface Worker {
  stop(): Promise<void>;
}
