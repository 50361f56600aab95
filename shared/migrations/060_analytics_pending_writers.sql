-- Every click, event and commission (created, voided, or un-voided) appends its fact to analytics_pending in the
-- writer's own transaction, by trigger: every path that writes these rows (the recording of clicks and events, the
-- commissions consumer, refunds, clawbacks, merchants' voids, and any added later) is counted without each having
-- to remember it. Facts already stored are appended by this migration, in the transaction that creates the
-- triggers: creating a trigger waits for the table's writers in flight and holds new ones until commit, so every
-- row is appended exactly once, by the backfill or by its trigger.

create or replace function analytics_pending_click() returns trigger language plpgsql as $$
begin
  insert into analytics_pending (merchant_id, kind, at, affiliate_id, landing_url, referrer_host, country, device)
  values (new.merchant_id, 'click', new.created_at, new.affiliate_id, new.landing_url, new.referrer_host,
          new.country, new.device);
  return null;
end $$;

create or replace function analytics_pending_event() returns trigger language plpgsql as $$
begin
  insert into analytics_pending (merchant_id, kind, at, affiliate_id, event_id, event_type, coupon, visit_id,
                                 currency, amount)
  values (new.merchant_id, 'event', new.created_at, new.affiliate_id, new.id, new.event_type, new.coupon,
          new.visit_id, new.currency, new.amount);
  return null;
end $$;

-- A commission counts while it is not voided: +amount when it is created so or leaves 'voided', -amount when it
-- enters 'voided'. Other updates (approval, payment) change nothing.
create or replace function analytics_pending_commission() returns trigger language plpgsql as $$
declare
  delta numeric;
begin
  if tg_op = 'INSERT' then
    delta := case when new.status = 'voided' then 0 else new.amount end;
  else
    delta := (case when new.status = 'voided' then 0 else new.amount end)
           - (case when old.status = 'voided' then 0 else old.amount end);
  end if;
  if delta <> 0 then
    insert into analytics_pending (merchant_id, kind, at, affiliate_id, event_id, currency, amount)
    values (new.merchant_id, 'commission', new.created_at, new.affiliate_id, new.event_id, new.currency, delta);
  end if;
  return null;
end $$;

do $$ begin
  if not exists (select 1 from pg_trigger where tgname = 'analytics_pending_of_clicks') then
    create trigger analytics_pending_of_clicks after insert on visits
      for each row execute function analytics_pending_click();
    insert into analytics_pending (merchant_id, kind, at, affiliate_id, landing_url, referrer_host, country, device)
    select merchant_id, 'click', created_at, affiliate_id, landing_url, referrer_host, country, device from visits;
  end if;
  if not exists (select 1 from pg_trigger where tgname = 'analytics_pending_of_events') then
    create trigger analytics_pending_of_events after insert on conversion_events
      for each row execute function analytics_pending_event();
    insert into analytics_pending (merchant_id, kind, at, affiliate_id, event_id, event_type, coupon, visit_id,
                                   currency, amount)
    select merchant_id, 'event', created_at, affiliate_id, id, event_type, coupon, visit_id, currency, amount
    from conversion_events;
  end if;
  if not exists (select 1 from pg_trigger where tgname = 'analytics_pending_of_commissions') then
    create trigger analytics_pending_of_commissions after insert or update of status, amount on commissions
      for each row execute function analytics_pending_commission();
    insert into analytics_pending (merchant_id, kind, at, affiliate_id, event_id, currency, amount)
    select merchant_id, 'commission', created_at, affiliate_id, event_id, currency, amount
    from commissions where status <> 'voided';
  end if;
end $$;
