import { createHash, randomBytes } from 'node:crypto';

/**
 * The bearer tokens of the dashboard and the portal: session cookies and the links they mail (verification, reset,
 * invitation). 256 random bits each, so Postgres keeps only their SHA-256: a fast hash is enough, nothing can be
 * guessed.
 */
export const newToken = () => randomBytes(32).toString('base64url');

export const hashToken = (token: string) => createHash('sha256').update(token).digest();
