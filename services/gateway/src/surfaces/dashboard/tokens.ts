import { createHash, randomBytes } from 'node:crypto';

/**
 * The dashboard's bearer tokens: session cookies and the links it mails (verification, password reset, invitation).
 * 256 random bits each, so Postgres keeps only their SHA-256: a fast hash is enough, nothing can be guessed.
 */
export const newToken = () => randomBytes(32).toString('base64url');

export const hashToken = (token: string) => createHash('sha256').update(token).digest();
