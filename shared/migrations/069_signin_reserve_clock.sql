-- dashboard_signin_reserve (migration 026) stamps a window's start with now(), the start of its transaction, and its
-- caller took the reservation's time the same way; releasing an attempt that guessed nothing compares the two
-- (a window that started again after the reservation does not hold it). Attempts that arrive at once each start
-- their transaction before any of them commits, so one that waited on another's row lock can hold an earlier now()
-- than the window that other one opened: its release found the window "started after it" and kept the charge (an
-- address charged for a sign-in refused as busy). This version stamps windows and the reservation with
-- clock_timestamp() once the rows are locked, so a reservation is never older than a window it counted in, and it
-- answers that time. The old function stays for a replica of the previous version during a rolling update.
create or replace function dashboard_signin_reserve_at(
  subjects text[], limits integer[], window_seconds integer, out wait integer, out at timestamptz
)
language plpgsql
as $$
declare
  win constant interval := make_interval(secs => window_seconds);
begin
  insert into dashboard_signin_failures (subject, window_start, count)
  select s, clock_timestamp(), 0 from unnest(subjects) as s order by s
  on conflict (subject) do nothing;
  perform 1 from dashboard_signin_failures where subject = any (subjects) order by subject for update;
  at := clock_timestamp();

  select coalesce(max(greatest(ceil(extract(epoch from f.window_start + win - at))::integer, 1)), 0) into wait
  from dashboard_signin_failures f
  join unnest(subjects, limits) as l (subject, lim) on l.subject = f.subject
  where f.window_start > at - win and f.count >= l.lim;
  if wait > 0 then
    return;
  end if;

  -- A window that has ended starts again at this attempt.
  update dashboard_signin_failures f set
    count = case when f.window_start > at - win then f.count + 1 else 1 end,
    window_start = case when f.window_start > at - win then f.window_start else at end
  where f.subject = any (subjects);
end;
$$;
