-- Sign-in attempts are reserved before the password is checked, in one statement that counts the attempt against
-- every subject (the account, the account from this address, the address) or against none of them: however many
-- attempts arrive at once, no subject lets more through than its limit. The gateway calls it as one statement;
-- rows are created first and then locked in subject order, so that two reservations never deadlock.
-- Returns 0 when the attempt is reserved, else the seconds until the first full subject's window ends.
create or replace function dashboard_signin_reserve(subjects text[], limits integer[], window_seconds integer)
returns integer
language plpgsql
as $$
declare
  win constant interval := make_interval(secs => window_seconds);
  wait integer := 0;
  r record;
begin
  insert into dashboard_signin_failures (subject, window_start, count)
  select s, now(), 0 from unnest(subjects) as s order by s
  on conflict (subject) do nothing;

  for r in
    select f.subject, f.window_start, f.count, l.lim
    from dashboard_signin_failures f
    join unnest(subjects, limits) as l (subject, lim) on l.subject = f.subject
    order by f.subject
    for update of f
  loop
    if r.window_start > now() - win and r.count >= r.lim then
      wait := greatest(wait, ceil(extract(epoch from r.window_start + win - now()))::integer, 1);
    end if;
  end loop;
  if wait > 0 then
    return wait;
  end if;

  -- A window that has ended starts again at this attempt.
  update dashboard_signin_failures f set
    count = case when f.window_start > now() - win then f.count + 1 else 1 end,
    window_start = case when f.window_start > now() - win then f.window_start else now() end
  where f.subject = any (subjects);
  return 0;
end;
$$;

-- The purge deletes rows by the age of their window.
create index if not exists dashboard_signin_failures_window_start on dashboard_signin_failures (window_start);
