import { VISIT_COOKIE } from '@platform/shared/schemas/tracking';

/**
 * The script merchants embed on their site: <script src="{base_url}/t/script.js" data-merchant="mer_…" async>.
 * On a page opened with ?via={slug} it records the visit (POST /t/visit on the origin it was loaded from) and sets
 * the first-party cookie that the merchant's backend sends back as cookie_id. It sends the current cookie along,
 * so a reload, or the landing after a referral link that already set it, stays one visit. An optional
 * data-fingerprint attribute (from the merchant's own fingerprinting, if any) is passed on for fraud rules; the
 * script computes none itself. The page's referrer goes along too: the request's own Referer is the merchant's page. Plain ES5 with no dependencies, so it runs on any page.
 */
export const TRACKING_SCRIPT = `(function () {
  'use strict';
  var script = document.currentScript;
  if (!script || !window.fetch) return;
  var merchantId = script.getAttribute('data-merchant');
  var via = new URLSearchParams(window.location.search).get('via');
  if (!merchantId || !via) return;
  var cookieName = '${VISIT_COOKIE}';
  var current = document.cookie.match(new RegExp('(?:^|;\\\\s*)' + cookieName + '=([^;]*)'));
  var body = { merchant_id: merchantId, via: via, landing_url: window.location.href.slice(0, 2048) };
  if (current) body.visit_id = decodeURIComponent(current[1]).slice(0, 64);
  if (document.referrer) body.referrer = document.referrer.slice(0, 2048);
  var fingerprint = script.getAttribute('data-fingerprint');
  if (fingerprint) body.fingerprint = fingerprint.slice(0, 256);
  window.fetch(new URL('/t/visit', script.src).href, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    credentials: 'omit',
    keepalive: true
  }).then(function (res) {
    return res.ok ? res.json() : null;
  }).then(function (visit) {
    if (!visit || !visit.visit_id) return;
    document.cookie = cookieName + '=' + encodeURIComponent(visit.visit_id) + '; Max-Age=' + visit.max_age_seconds +
      '; Path=/; SameSite=Lax' + (window.location.protocol === 'https:' ? '; Secure' : '');
  }).catch(function () {});
})();
`;
