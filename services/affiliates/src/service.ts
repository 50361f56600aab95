import { decryptionKeys, encryptionKey } from '@platform/shared/config';
import { createHmacKey } from '@platform/shared/crypto';
import type { Logger } from '@platform/shared/log';
import { startService, type ServiceRuntime } from '@platform/shared/service';
import type { AffiliatesConfig } from './config.ts';
import type { AffiliatesDeps } from './deps.ts';
import { applyToProgrammeOperation } from './operations/apply.ts';
import { createAffiliateOperation } from './operations/create.ts';
import { getAffiliateOperation } from './operations/get.ts';
import { listAffiliatesOperation } from './operations/list.ts';
import { updateAffiliateOperation } from './operations/update.ts';
import { createOnboardingLinkOperation } from './operations/create-onboarding-link.ts';
import { createTaxFormOperation } from './operations/create-tax-form.ts';
import { getPayoutDetailsOperation } from './operations/get-payout-details.ts';
import { listPayoutDetailsChangesOperation } from './operations/list-payout-details-changes.ts';
import { listTaxFormsOperation } from './operations/list-tax-forms.ts';
import { openOnboardingOperation } from './operations/open-onboarding.ts';
import { putPayoutDetailsOperation } from './operations/put-payout-details.ts';
import { submitOnboardingOperation } from './operations/submit-onboarding.ts';
import { createPortalSessionOperation } from './operations/create-portal-session.ts';
import { startVaultPurge } from './purge-vault.ts';

export async function startAffiliatesService(config: AffiliatesConfig, log?: Logger): Promise<ServiceRuntime> {
  const deps: AffiliatesDeps = {
    publicBaseUrl: config.PUBLIC_BASE_URL,
    cursorKey: createHmacKey(encryptionKey(config), 'cursor'),
    vaultKeys: decryptionKeys(config),
  };
  return startService({
    name: 'affiliates',
    config,
    outboxRelay: config.OUTBOX_RELAY && config,
    operations: [
      listAffiliatesOperation(deps),
      getAffiliateOperation(deps),
      createAffiliateOperation(deps),
      updateAffiliateOperation(deps),
      createTaxFormOperation(deps),
      listTaxFormsOperation(),
      putPayoutDetailsOperation(deps),
      getPayoutDetailsOperation(),
      listPayoutDetailsChangesOperation(deps),
      createOnboardingLinkOperation(deps),
      openOnboardingOperation(),
      submitOnboardingOperation(deps),
      applyToProgrammeOperation(deps),
      createPortalSessionOperation(deps),
    ],
    workers: ({ sql, log: serviceLog }) => [
      startVaultPurge({ sql, log: serviceLog, retentionDays: config.VAULT_SUPERSEDED_RETENTION_DAYS }),
    ],
    log,
  });
}
