import { api, dash, unwrap } from '../api.ts';
import { useAction, useLoad } from '../hooks.ts';
import { Empty, ErrorText, formatTime, Link, Loaded } from '../ui.tsx';

/**
 * Applications: the pending affiliates with what they told the merchant on the programme page, each approved or
 * rejected here (PATCH /api/v1/affiliates/{id}; the affiliates service mails the applicant the decision).
 */
export function Applications() {
  const applications = useLoad(async () => unwrap(await dash.GET('/dashboard/api/applications')), []);
  const action = useAction();
  const decide = async (id: string, status: 'approved' | 'rejected') => {
    const done = await action.run(async () =>
      unwrap(
        await api.PATCH('/api/v1/affiliates/{affiliate_id}', {
          params: { path: { affiliate_id: id } },
          body: { status },
        }),
      ),
    );
    if (done) applications.reload();
  };
  return (
    <section aria-labelledby="applications-heading">
      <h2 id="applications-heading">Applications</h2>
      <Loaded state={applications} what="the applications">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No applications waiting. Share your programme page (Settings › Programme page).</Empty>
          ) : (
            <ul class="plain applications">
              {list.data.map((a) => (
                <li key={a.affiliate_id} aria-label={`Application of ${a.display_name}`}>
                  <p>
                    <Link to={`/affiliates/${a.affiliate_id}`}>{a.display_name}</Link> ({a.email}), applied{' '}
                    {formatTime(a.applied_at)}
                  </p>
                  {a.website ? (
                    <p>
                      Website: <code>{a.website}</code>
                    </p>
                  ) : null}
                  {a.promotion ? <p>How they will promote you: {a.promotion}</p> : null}
                  <button
                    type="button"
                    class="primary"
                    disabled={action.busy}
                    onClick={() => void decide(a.affiliate_id, 'approved')}
                    aria-label={`Approve ${a.display_name}`}
                  >
                    Approve
                  </button>{' '}
                  <button
                    type="button"
                    class="danger"
                    disabled={action.busy}
                    onClick={() => void decide(a.affiliate_id, 'rejected')}
                    aria-label={`Reject ${a.display_name}`}
                  >
                    Reject
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      <ErrorText error={action.error} />
    </section>
  );
}
