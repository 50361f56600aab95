import type { OnboardingReply } from '@platform/shared/payments/rpc';
import { escapeHtml as escape, type Page } from '../../http/page-shell.ts';

type OnboardingForm = Extract<OnboardingReply, { kind: 'page' }>;

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f8fa;color:#1f2328}
main{max-width:34rem;margin:2rem auto;padding:2rem;background:#fff;border:1px solid #d0d7de;border-radius:8px}
h1{font-size:1.5rem;margin-top:0}fieldset{border:0;padding:0;margin:0 0 1.5rem}legend{font-weight:600;margin-bottom:.5rem}
label{display:block;margin-top:1rem;font-weight:500}input[type=text],input[type=url],textarea{box-sizing:border-box;width:100%;padding:.5rem;border:1px solid #8c959f;border-radius:6px;font:inherit}
.problem{color:#b3261e;margin:.25rem 0 0}.check{display:flex;gap:.5rem;align-items:flex-start;font-weight:400}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font:inherit;font-weight:600;color:#fff;background:#1f6feb;border:0;border-radius:6px;cursor:pointer}`;

/**
 * The hosted onboarding page of an account link: the business, the bank account payouts go to, and the services
 * agreement, in the gateway's one page shell (http/page-shell.ts). Server-rendered, without script; a refused form
 * shows each problem beside its field (the account number is never written back).
 */
export function renderOnboardingPage(page: OnboardingForm): Page {
  const v = (name: string) => escape(page.values[name] ?? '');
  const problem = (name: string) =>
    page.problems[name] ? `<p class="problem" id="${name}-problem">${escape(page.problems[name])}</p>` : '';
  const described = (name: string) =>
    page.problems[name] ? ` aria-invalid="true" aria-describedby="${name}-problem"` : '';
  const input = (name: string, label: string, type = 'text', extra = '') =>
    `<label for="${name}">${label}</label><input type="${type}" id="${name}" name="${name}" value="${v(name)}"${described(name)}${extra}>${problem(name)}`;
  const who = page.account.email ? ` for ${escape(page.account.email)}` : '';
  return {
    title: 'Set up payouts',
    style: STYLE,
    body: `<h1>Set up payouts${who}</h1>
<p>Tell us about the business and where to send its payouts.</p>
${Object.keys(page.problems).length ? '<p class="problem" role="alert">Some details need your attention.</p>' : ''}
<form method="post" novalidate>
<fieldset><legend>Business</legend>
${input('business_name', 'Business name', 'text', ' autocomplete="organization" required')}
${input('business_url', 'Website (optional)', 'url', ' autocomplete="url"')}
<label for="product_description">What the business sells</label><textarea id="product_description" name="product_description" rows="3"${described('product_description')}>${v('product_description')}</textarea>${problem('product_description')}
</fieldset>
<fieldset><legend>Bank account for payouts</legend>
${input('account_holder_name', 'Account holder name', 'text', ' autocomplete="name" required')}
${input('routing_number', 'Routing number', 'text', ' inputmode="numeric" autocomplete="off" required')}
<label for="account_number">Account number</label><input type="text" id="account_number" name="account_number" value="" inputmode="numeric" autocomplete="off" required${described('account_number')}>${problem('account_number')}
</fieldset>
<label class="check"><input type="checkbox" name="tos" value="accepted"${page.values['tos'] === 'accepted' ? ' checked' : ''}${described('tos')}> I accept the services agreement</label>${problem('tos')}
<button type="submit">Submit</button>
</form>`,
  };
}

/** What a link that names nothing shows. */
export const NOT_FOUND_PAGE: Page = {
  title: 'Link not found',
  style: STYLE,
  body: '<h1>This link is not valid</h1><p>Ask the platform for a new onboarding link.</p>',
};
