import { encryptionKey } from '@platform/shared/config';
import { createHmacKey } from '@platform/shared/crypto';
import type { Logger } from '@platform/shared/log';
import { startService, type ServiceRuntime } from '@platform/shared/service';
import type { AffiliatesConfig } from './config.ts';
import type { AffiliatesDeps } from './deps.ts';
import { createAffiliateOperation } from './operations/create.ts';
import { getAffiliateOperation } from './operations/get.ts';
import { listAffiliatesOperation } from './operations/list.ts';
import { updateAffiliateOperation } from './operations/update.ts';

export async function startAffiliatesService(config: AffiliatesConfig, log?: Logger): Promise<ServiceRuntime> {
  const deps: AffiliatesDeps = {
    publicBaseUrl: config.PUBLIC_BASE_URL,
    cursorKey: createHmacKey(encryptionKey(config), 'cursor'),
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
    ],
    log,
  });
}
