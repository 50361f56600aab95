-- Dashboard users get a role (services/gateway/src/dashboard/permissions.ts says what each may do). The users of
-- before roles could do everything, so they become owners; the default keeps a replica still running the previous
-- release, which inserts users without a role, making users who can do what they could before.
alter table dashboard_users add column if not exists role text not null default 'owner';

do $$
begin
  alter table dashboard_users
    add constraint dashboard_users_role check (role in ('owner', 'admin', 'developer', 'viewer'));
exception
  when duplicate_object then null;
end $$;
