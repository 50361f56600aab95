import type { Role } from '../../http/accounts/permissions.ts';

/** A change to a merchant's team, by a member whose role has the `team` permission. */
export type TeamChange = { kind: 'add'; role: Role } | { kind: 'role'; to: Role } | { kind: 'remove' };

export interface TeamRefusal {
  code: 'FORBIDDEN' | 'CONFLICT';
  message: string;
}

/**
 * Why `actor` may not make `change` to a member holding `target` (null when adding one), given how many owners the
 * merchant has; null when it may. The owner role is an owner's to give or take: an admin manages everyone else.
 * A merchant always keeps an owner, so the last one can be neither demoted nor removed.
 */
export function teamChangeRefusal(
  actor: Role,
  change: TeamChange,
  target: { role: Role } | null,
  owners: number,
): TeamRefusal | null {
  const givesOwner =
    (change.kind === 'add' && change.role === 'owner') || (change.kind === 'role' && change.to === 'owner');
  if ((givesOwner || target?.role === 'owner') && actor !== 'owner')
    return { code: 'FORBIDDEN', message: 'Only an owner may give the owner role or change an owner' };
  const losesOwner =
    target?.role === 'owner' && (change.kind === 'remove' || (change.kind === 'role' && change.to !== 'owner'));
  if (losesOwner && owners <= 1)
    return {
      code: 'CONFLICT',
      message: 'A merchant keeps at least one owner: make another member owner first',
    };
  return null;
}
