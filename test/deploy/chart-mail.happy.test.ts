import { join } from 'node:path';
import t from 'tap';
import { CHART, renderChart, templateChart, type K8sObject } from '../helpers/helm.ts';

// E-mail in the chart: SMTP_URL (it holds the SMTP password) goes into the Secret and to the dispatcher alone, which
// sends the mail; MAIL_FROM is a plain variable of the dispatcher's; a value the dispatcher would refuse fails the
// install.
t.setTimeout(60_000);

type Env = {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef: { name: string; key: string; optional?: boolean } };
};
const containerEnv = (o: K8sObject) => (o.spec.template.spec.containers[0] as { env: Env[] }).env;

t.test('SMTP_URL from the Secret to the dispatcher only, MAIL_FROM beside it', async (t) => {
  const objects = await renderChart(t, { valuesFiles: [join(CHART, 'ci/minimal-values.yaml')] });
  const secret = objects.find((o) => o.kind === 'Secret')!;
  t.equal(Buffer.from(secret.data!['SMTP_URL']!, 'base64').toString(), 'smtp://platform:secret@mail.platform.svc:587');
  for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
    const env = containerEnv(deployment);
    const smtp = env.find((e) => e.name === 'SMTP_URL');
    if (deployment.metadata.name.endsWith('-dispatcher')) {
      t.same(smtp?.valueFrom?.secretKeyRef, { name: secret.metadata.name, key: 'SMTP_URL', optional: true });
      t.equal(smtp?.value, undefined, 'never as a plain value');
      t.equal(env.find((e) => e.name === 'MAIL_FROM')?.value, 'Affiliate platform <no-reply@platform.example>');
    } else {
      t.equal(smtp, undefined, `${deployment.metadata.name} has no SMTP_URL`);
    }
  }
});

t.test('without secrets.smtpUrl the Secret has no SMTP_URL; a URL that is not SMTP fails the install', async (t) => {
  const objects = await renderChart(t, { set: { 'secrets.databaseUrl': 'postgres://affiliate@db:5432/affiliate' } });
  t.equal(objects.find((o) => o.kind === 'Secret')!.data!['SMTP_URL'], undefined);
  const bad = await templateChart(t, {
    set: { 'secrets.databaseUrl': 'postgres://affiliate@db:5432/affiliate', 'secrets.smtpUrl': 'http://mail' },
  });
  t.not(bad.code, 0);
  t.match(bad.stderr, "at '/secrets/smtpUrl'");
  const env = await templateChart(t, {
    set: { 'secrets.databaseUrl': 'postgres://affiliate@db:5432/affiliate', 'services.dispatcher.env.SMTP_URL': 'x' },
  });
  t.not(env.code, 0, 'SMTP_URL is not accepted as a plain variable');
});
