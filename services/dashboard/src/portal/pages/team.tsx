import { useLoad } from '../../hooks.ts';
import { Empty, Loaded, Page } from '../../ui.tsx';
import { portal, type Team } from '../api.ts';
import { Copyable } from '../copy.tsx';

/** The recruit link (whoever applies through it joins as this affiliate's child) and how many recruits there are. */
export function TeamPage() {
  const team = useLoad(() => portal<Team>('GET', '/team'), []);
  return (
    <Page title="Team">
      <Loaded state={team} what="your team">
        {(t) => (
          <>
            <section aria-labelledby="recruit-heading">
              <h2 id="recruit-heading">Your recruit link</h2>
              {t.recruit_link ? (
                <>
                  <p>Affiliates who apply through this link join your team.</p>
                  <Copyable label="recruit link" value={t.recruit_link} testId="recruit-link" />
                </>
              ) : (
                <Empty>The programme has no public page yet, so there is no recruit link.</Empty>
              )}
            </section>
            <section aria-labelledby="recruits-heading">
              <h2 id="recruits-heading">Recruits</h2>
              <p data-testid="recruits">
                {t.children === 1 ? '1 affiliate has' : `${t.children} affiliates have`} joined through your link.
              </p>
            </section>
          </>
        )}
      </Loaded>
    </Page>
  );
}
