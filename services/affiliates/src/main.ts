import { runMain } from '@platform/shared/main';
import { withTracing } from '@platform/shared/tracing/start';
import { loadAffiliatesConfig } from './config.ts';
import { startAffiliatesService } from './service.ts';

runMain('affiliates', withTracing('affiliates', loadAffiliatesConfig, startAffiliatesService));
