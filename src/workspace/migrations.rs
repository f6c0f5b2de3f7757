//! The workspace database schema, as an ordered list of named migrations.
//!
//! Migrations are applied in order when a workspace is opened; each is recorded by name in
//! `_migrations`, so areas can add theirs without renumbering anyone else's. A migration's
//! statements and its record are written in one transaction. Never edit an applied migration:
//! add a new one. `docs/storage.md` describes the resulting tables.

use crate::store::{Db, Stmt, StoreError};

/// One migration: a unique name and its statements (one SQL statement each).
pub struct Migration {
    /// Unique, never reused.
    pub name: &'static str,
    /// DDL statements, applied in order.
    pub statements: &'static [&'static str],
}

/// Every migration, in the order they apply.
pub const ALL: &[Migration] = &[
    Migration {
        name: "0001_workspace",
        statements: &[
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS offer (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL, updated_at INTEGER NOT NULL)",
            "CREATE TABLE IF NOT EXISTS memories (id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT UNIQUE, note TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
        ],
    },
    Migration {
        name: "0002_schedule",
        statements: &[
            "CREATE TABLE schedule (job TEXT NOT NULL, key TEXT NOT NULL, due_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT, PRIMARY KEY (job, key))",
            "CREATE INDEX schedule_due ON schedule (due_at)",
        ],
    },
    Migration {
        name: "0003_approvals",
        statements: &[
            "CREATE TABLE approvals (id TEXT PRIMARY KEY, action TEXT NOT NULL, args TEXT NOT NULL, args_hash TEXT NOT NULL, \
             summary TEXT NOT NULL, impact TEXT NOT NULL, cost TEXT, irreversible INTEGER NOT NULL, \
             status TEXT NOT NULL CHECK (status IN ('pending', 'executing', 'done', 'not_done', 'rejected')), \
             result TEXT, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, decided_at INTEGER, finished_at INTEGER, \
             updated_at INTEGER NOT NULL, updated_by TEXT NOT NULL, updated_client TEXT NOT NULL)",
            // At most one open approval per action and arguments (PRODUCT §6: asking again
            // returns the same one).
            "CREATE UNIQUE INDEX approvals_open ON approvals (action, args_hash) WHERE status IN ('pending', 'executing')",
            "CREATE INDEX approvals_by_status ON approvals (status, created_at)",
            "CREATE TABLE approval_audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, approval_id TEXT NOT NULL, at INTEGER NOT NULL, \
             actor TEXT NOT NULL, client TEXT NOT NULL, from_status TEXT, to_status TEXT NOT NULL, note TEXT)",
            "CREATE INDEX approval_audit_by_approval ON approval_audit (approval_id, seq)",
            // The audit trail is written by the database itself, in the same transaction as
            // every change of status, so no code path can change an approval unrecorded.
            "CREATE TRIGGER approvals_audit_insert AFTER INSERT ON approvals BEGIN \
             INSERT INTO approval_audit (approval_id, at, actor, client, from_status, to_status, note) \
             VALUES (NEW.id, NEW.updated_at, NEW.updated_by, NEW.updated_client, NULL, NEW.status, NEW.summary); END",
            "CREATE TRIGGER approvals_audit_update AFTER UPDATE OF status ON approvals WHEN OLD.status IS NOT NEW.status BEGIN \
             INSERT INTO approval_audit (approval_id, at, actor, client, from_status, to_status, note) \
             VALUES (NEW.id, NEW.updated_at, NEW.updated_by, NEW.updated_client, OLD.status, NEW.status, NEW.result); END",
        ],
    },
    // The user's OAuth grants and browser sessions (`oauth::grants`).
    Migration {
        name: "0004_oauth_grants",
        statements: &[
            "CREATE TABLE IF NOT EXISTS oauth_grants (id TEXT PRIMARY KEY, subject TEXT NOT NULL, client_id TEXT NOT NULL, client_name TEXT NOT NULL, redirect_uri TEXT NOT NULL, redirect_uri_in_request INTEGER NOT NULL, scope TEXT NOT NULL, app INTEGER NOT NULL, resource TEXT NOT NULL, refresh INTEGER NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, activated_at INTEGER, last_used_at INTEGER NOT NULL, revoked_at INTEGER, revoked_reason TEXT)",
            "CREATE TABLE IF NOT EXISTS oauth_codes (hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, code_challenge TEXT NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER)",
            "CREATE INDEX IF NOT EXISTS oauth_codes_grant ON oauth_codes (grant_id)",
            "CREATE TABLE IF NOT EXISTS oauth_refresh_tokens (hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, rotated_at INTEGER, successor_salt TEXT, access_jti TEXT NOT NULL, access_iat INTEGER NOT NULL, access_scope TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id)",
            "CREATE TABLE IF NOT EXISTS web_sessions (hash TEXT PRIMARY KEY, subject TEXT NOT NULL, display TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)",
        ],
    },
    Migration {
        name: "0005_billing",
        statements: &[
            "CREATE TABLE billing (id INTEGER PRIMARY KEY CHECK (id = 1), plan TEXT NOT NULL, status TEXT NOT NULL, \
             customer TEXT, subscription TEXT, subscription_item TEXT, period_start INTEGER, period_end INTEGER, \
             cancel_at_period_end INTEGER NOT NULL DEFAULT 0, event_at INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL)",
            "CREATE TABLE billing_events (id TEXT PRIMARY KEY, type TEXT NOT NULL, created_at INTEGER NOT NULL, received_at INTEGER NOT NULL)",
            "CREATE INDEX billing_events_received ON billing_events (received_at)",
            "CREATE TABLE invoices (id TEXT PRIMARY KEY, amount INTEGER NOT NULL, currency TEXT NOT NULL, description TEXT NOT NULL, created_at INTEGER NOT NULL)",
            "CREATE TABLE usage (period TEXT NOT NULL, metric TEXT NOT NULL, amount INTEGER NOT NULL, PRIMARY KEY (period, metric))",
            "CREATE TABLE sandbox_billing_sessions (id TEXT PRIMARY KEY, kind TEXT NOT NULL, plan TEXT, customer TEXT, \
             status TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, completed_at INTEGER)",
            "CREATE TABLE sandbox_billing_customers (id TEXT PRIMARY KEY, card_last4 TEXT NOT NULL, declines_charges INTEGER NOT NULL, created_at INTEGER NOT NULL)",
            "CREATE TABLE sandbox_billing_subscriptions (id TEXT PRIMARY KEY, customer TEXT NOT NULL, item TEXT NOT NULL, plan TEXT NOT NULL, \
             status TEXT NOT NULL, period_start INTEGER NOT NULL, period_end INTEGER NOT NULL, created_at INTEGER NOT NULL)",
            "CREATE TABLE sandbox_billing_requests (idempotency_key TEXT PRIMARY KEY, response TEXT NOT NULL, created_at INTEGER NOT NULL)",
        ],
    },
    Migration {
        name: "0006_support",
        statements: &[
            "CREATE TABLE support_requests (id TEXT PRIMARY KEY, reference TEXT NOT NULL UNIQUE, category TEXT NOT NULL, \
             subject TEXT NOT NULL, message TEXT NOT NULL, reply_to TEXT, sender TEXT NOT NULL, client TEXT NOT NULL, \
             context TEXT NOT NULL, created_at INTEGER NOT NULL, forwarded_at INTEGER, last_error TEXT)",
            "CREATE INDEX support_requests_created ON support_requests (created_at)",
        ],
    },
    Migration {
        name: "0007_planning",
        statements: &[
            "CREATE TABLE IF NOT EXISTS target (id INTEGER PRIMARY KEY CHECK (id = 1), description TEXT NOT NULL, filters TEXT, \
             version INTEGER NOT NULL, confirmed_at INTEGER, counted_version INTEGER, pool_count INTEGER, counted_at INTEGER, \
             previewed_version INTEGER, updated_at INTEGER NOT NULL)",
            "CREATE TABLE IF NOT EXISTS playbook (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL, updated_at INTEGER NOT NULL)",
            "CREATE TABLE IF NOT EXISTS sequence (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL, version INTEGER NOT NULL, \
             approved_version INTEGER, approved_at INTEGER, checked_version INTEGER, checked_at INTEGER, updated_at INTEGER NOT NULL)",
            "CREATE TABLE IF NOT EXISTS leads (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, email_hash TEXT NOT NULL, \
             first_name TEXT NOT NULL, last_name TEXT NOT NULL, title TEXT NOT NULL, seniority TEXT, department TEXT, \
             company TEXT NOT NULL, company_domain TEXT, industry TEXT, company_size TEXT, country TEXT, city TEXT, \
             email_status TEXT, provider TEXT NOT NULL, provider_id TEXT NOT NULL, import_id TEXT NOT NULL, imported_at INTEGER NOT NULL)",
            "CREATE INDEX IF NOT EXISTS leads_by_email_hash ON leads (email_hash)",
            "CREATE INDEX IF NOT EXISTS leads_by_provider_id ON leads (provider, provider_id)",
            "CREATE INDEX IF NOT EXISTS leads_by_import ON leads (import_id)",
            "CREATE TABLE IF NOT EXISTS lead_imports (id TEXT PRIMARY KEY, filters TEXT NOT NULL, provider TEXT NOT NULL, \
             requested INTEGER NOT NULL, cursor INTEGER NOT NULL DEFAULT 0, imported INTEGER NOT NULL DEFAULT 0, \
             skipped_suppressed INTEGER NOT NULL DEFAULT 0, skipped_duplicate INTEGER NOT NULL DEFAULT 0, \
             skipped_no_email INTEGER NOT NULL DEFAULT 0, skipped_excluded INTEGER NOT NULL DEFAULT 0, \
             credits INTEGER NOT NULL DEFAULT 0, skipped_known INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL, \
             error TEXT, month TEXT NOT NULL, started_at INTEGER NOT NULL, finished_at INTEGER)",
            "CREATE TABLE IF NOT EXISTS suppression (value TEXT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('email', 'domain')), \
             reason TEXT NOT NULL, source TEXT NOT NULL, created_at INTEGER NOT NULL)",
            "CREATE TABLE IF NOT EXISTS personal_data_access (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, \
             tool TEXT NOT NULL, subject TEXT NOT NULL, client_id TEXT NOT NULL, request_id TEXT NOT NULL, purpose TEXT NOT NULL, \
             people INTEGER NOT NULL, person_ids TEXT NOT NULL, detail TEXT)",
        ],
    },
    Migration {
        name: "0008_sending_sandbox",
        statements: &[
            // The sandbox sending platform's own state (`sending::sandbox`): what a real platform
            // would keep on its side. Live workspaces never write these tables.
            "CREATE TABLE sandbox_sending_state (id INTEGER PRIMARY KEY CHECK (id = 1), anchor_real INTEGER NOT NULL, \
             anchor_sim INTEGER NOT NULL, scale REAL NOT NULL, frontier INTEGER NOT NULL)",
            "CREATE TABLE sandbox_sending_orders (id TEXT PRIMARY KEY, idempotency_key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, \
             doc TEXT NOT NULL, total INTEGER NOT NULL, created_at INTEGER NOT NULL)",
            "CREATE TABLE sandbox_sending_accounts (email TEXT PRIMARY KEY, domain TEXT NOT NULL, order_id TEXT NOT NULL, \
             first_name TEXT NOT NULL, last_name TEXT NOT NULL, pre_warmed INTEGER NOT NULL, created_at INTEGER NOT NULL, \
             ready_at INTEGER NOT NULL, warmup_at INTEGER, sent_day TEXT, sent_count INTEGER NOT NULL DEFAULT 0, \
             cold_days INTEGER NOT NULL DEFAULT 0)",
            "CREATE INDEX sandbox_sending_accounts_by_domain ON sandbox_sending_accounts (domain)",
            "CREATE TABLE sandbox_sending_campaigns (id TEXT PRIMARY KEY, idempotency_key TEXT NOT NULL UNIQUE, name TEXT NOT NULL, \
             status INTEGER NOT NULL, doc TEXT NOT NULL, created_at INTEGER NOT NULL, activated_at INTEGER, day TEXT, \
             day_sent INTEGER NOT NULL DEFAULT 0)",
            "CREATE TABLE sandbox_sending_leads (campaign_id TEXT NOT NULL, email TEXT NOT NULL, doc TEXT NOT NULL, \
             step INTEGER NOT NULL, next_at INTEGER NOT NULL, state TEXT NOT NULL, seq INTEGER NOT NULL, \
             PRIMARY KEY (campaign_id, email))",
            "CREATE INDEX sandbox_sending_leads_due ON sandbox_sending_leads (campaign_id, state, next_at)",
            "CREATE TABLE sandbox_sending_events (id TEXT PRIMARY KEY, campaign_id TEXT NOT NULL, lead TEXT NOT NULL, kind TEXT NOT NULL, \
             step INTEGER NOT NULL, account TEXT NOT NULL, at INTEGER NOT NULL, applied INTEGER NOT NULL DEFAULT 0, \
             subject TEXT NOT NULL, body TEXT NOT NULL)",
            "CREATE INDEX sandbox_sending_events_pending ON sandbox_sending_events (applied, kind, at)",
            "CREATE INDEX sandbox_sending_events_by_campaign ON sandbox_sending_events (campaign_id, kind, at)",
            "CREATE TABLE sandbox_sending_blocklist (value TEXT PRIMARY KEY, created_at INTEGER NOT NULL)",
        ],
    },
    Migration {
        name: "0009_sending",
        statements: &[
            // Sizing and the user's settled choices (`workspace::sending`).
            "CREATE TABLE sending_plan (id INTEGER PRIMARY KEY CHECK (id = 1), sizing TEXT NOT NULL, \
             confirmed_at INTEGER, updated_at INTEGER NOT NULL)",
            "CREATE TABLE sending_choices (step TEXT PRIMARY KEY, doc TEXT NOT NULL, card TEXT NOT NULL, \
             basis TEXT NOT NULL, settled_at INTEGER NOT NULL)",
            // What was ordered, and the domains and mailboxes it made.
            "CREATE TABLE sending_orders (id TEXT PRIMARY KEY, kind TEXT NOT NULL, doc TEXT NOT NULL, reference TEXT NOT NULL, \
             charged INTEGER, currency TEXT NOT NULL, ordered_at INTEGER NOT NULL)",
            "CREATE TABLE sending_domains (name TEXT PRIMARY KEY, order_id TEXT NOT NULL, kind TEXT NOT NULL, \
             dns TEXT, price_year INTEGER NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
            "CREATE TABLE mailboxes (address TEXT PRIMARY KEY, domain TEXT NOT NULL, order_id TEXT NOT NULL, \
             first_name TEXT NOT NULL, last_name TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, \
             setup_done_at INTEGER, warmup_requested_at INTEGER, warmup_started_at INTEGER, health INTEGER, \
             ready_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
            // Outbound calls per rate-limit bucket, for pacing (`sending::instantly`).
            "CREATE TABLE provider_calls (bucket TEXT NOT NULL, at INTEGER NOT NULL)",
            "CREATE INDEX provider_calls_by_bucket ON provider_calls (bucket, at)",
        ],
    },
    Migration {
        name: "0010_campaigns",
        statements: &[
            // Campaigns and their leads, replies, and the suppression entries mirrored to the
            // platform's blocklist (`workspace::campaigns`).
            "CREATE TABLE campaigns (id TEXT PRIMARY KEY, name TEXT NOT NULL, \
             status TEXT NOT NULL CHECK (status IN ('draft', 'active', 'paused', 'completed', 'stopped')), \
             platform_id TEXT, doc TEXT NOT NULL, leads INTEGER NOT NULL, created_at INTEGER NOT NULL, launched_at INTEGER, \
             paused_at INTEGER, paused_by TEXT, pause_reason TEXT, stats TEXT, synced_at INTEGER, \
             replies_since INTEGER NOT NULL, bounce_alert_at INTEGER, state_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
            "CREATE TABLE campaign_leads (campaign_id TEXT NOT NULL, lead_id INTEGER NOT NULL, email TEXT NOT NULL, \
             outcome TEXT, added_at INTEGER NOT NULL, PRIMARY KEY (campaign_id, lead_id))",
            "CREATE INDEX campaign_leads_by_lead ON campaign_leads (lead_id)",
            "CREATE INDEX campaign_leads_by_email ON campaign_leads (campaign_id, email)",
            "CREATE TABLE replies (id TEXT PRIMARY KEY, campaign_id TEXT NOT NULL, lead TEXT NOT NULL, from_address TEXT NOT NULL, \
             mailbox TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, class TEXT NOT NULL, step INTEGER, \
             received_at INTEGER NOT NULL, fetched_at INTEGER NOT NULL, read_at INTEGER)",
            "CREATE INDEX replies_by_time ON replies (received_at DESC, id)",
            "CREATE INDEX replies_by_campaign ON replies (campaign_id, class)",
            "CREATE TABLE blocklist_mirror (value TEXT PRIMARY KEY, at INTEGER NOT NULL)",
        ],
    },
    Migration {
        name: "0011_bounce_baseline",
        statements: &[
            // The platform's sent and bounced totals when the campaign last resumed: the bounce
            // threshold judges only what was sent after (`campaigns::judged_bounce_bp`).
            "ALTER TABLE campaigns ADD COLUMN base_sent INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE campaigns ADD COLUMN base_bounced INTEGER NOT NULL DEFAULT 0",
        ],
    },
    Migration {
        name: "0012_outcomes_cursor",
        statements: &[
            // Where the next read of the campaign's bounced and unsubscribed leads goes on.
            "ALTER TABLE campaigns ADD COLUMN outcomes_after TEXT",
        ],
    },
    Migration {
        name: "0013_outcomes_read_at",
        statements: &[
            // When a read of those leads last reached the end (`campaigns::sync_one`).
            "ALTER TABLE campaigns ADD COLUMN outcomes_read_at INTEGER",
        ],
    },
];

#[derive(serde::Deserialize)]
struct Applied {
    name: String,
}

/// Applies every migration not yet recorded, all in one transaction: a new workspace gets its
/// whole schema in one batch (one crossing into the object's storage and one commit, rather
/// than one per migration), and a failure leaves the schema as it was.
pub fn apply(db: &dyn Db, now_ms: i64) -> Result<(), StoreError> {
    db.exec(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
        vec![],
    )?;
    let applied: Vec<Applied> = db.rows("SELECT name FROM _migrations", vec![])?;
    if applied.len() == ALL.len() {
        return Ok(());
    }
    let mut stmts = Vec::new();
    for migration in ALL.iter().filter(|m| !applied.iter().any(|a| a.name == m.name)) {
        stmts.extend(migration.statements.iter().map(|sql| Stmt::new(sql, vec![])));
        stmts.push(Stmt::new(
            "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
            vec![migration.name.into(), now_ms.into()],
        ));
    }
    db.batch(stmts).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryDb;

    #[test]
    fn applies_once_and_names_are_unique() {
        let db = MemoryDb::new();
        apply(&db, 1).unwrap();
        apply(&db, 2).unwrap();
        let n = db.query(Stmt::new("SELECT COUNT(*) FROM _migrations", vec![])).unwrap().scalar_i64();
        assert_eq!(n, Some(ALL.len() as i64));
        let mut names: Vec<&str> = ALL.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }

    fn recorded(db: &dyn Db) -> i64 {
        db.query(Stmt::new("SELECT COUNT(*) FROM _migrations", vec![])).unwrap().scalar_i64().unwrap()
    }

    /// Runs SQL made at run time (statements are `&'static str`: leaked, in a test).
    fn run(db: &dyn Db, sql: String) -> Result<(), StoreError> {
        db.exec(Box::leak(sql.into_boxed_str()), vec![]).map(drop)
    }

    /// The tables a migration creates.
    fn tables(m: &Migration) -> Vec<&'static str> {
        m.statements.iter().filter_map(|s| s.strip_prefix("CREATE TABLE ")?.split(' ').next()).collect()
    }

    /// The columns a migration adds to existing tables, as (table, column).
    fn columns(m: &Migration) -> Vec<(&'static str, &'static str)> {
        m.statements
            .iter()
            .filter_map(|s| {
                let (table, rest) = s.strip_prefix("ALTER TABLE ")?.split_once(" ADD COLUMN ")?;
                Some((table, rest.split(' ').next()?))
            })
            .collect()
    }

    #[test]
    fn an_older_workspace_gets_the_migrations_it_lacks() {
        // As a workspace made before each of the last two migrations existed (one creates
        // tables, the other adds columns).
        for back in [1, 2] {
            let mem = MemoryDb::new();
            let db: &dyn Db = &mem;
            apply(db, 1).unwrap();
            let undone = &ALL[ALL.len() - back..];
            for m in undone.iter().rev() {
                db.exec("DELETE FROM _migrations WHERE name = ?", vec![m.name.into()]).unwrap();
                for (table, column) in columns(m) {
                    run(db, format!("ALTER TABLE {table} DROP COLUMN {column}")).unwrap();
                }
                for table in tables(m) {
                    run(db, format!("DROP TABLE {table}")).unwrap();
                }
            }
            apply(db, 2).unwrap();
            assert_eq!(recorded(db), ALL.len() as i64);
            for m in undone {
                assert!(!tables(m).is_empty() || !columns(m).is_empty(), "{} is checked", m.name);
                for table in tables(m) {
                    run(db, format!("SELECT 1 FROM {table}")).unwrap();
                }
                for (table, column) in columns(m) {
                    run(db, format!("SELECT {column} FROM {table}")).unwrap();
                }
            }
        }
    }

    #[test]
    fn a_failing_migration_applies_none_of_the_pending_ones() {
        let mem = MemoryDb::new();
        let db: &dyn Db = &mem;
        apply(db, 1).unwrap();
        // The last two that create tables pending again: the first of them can run (its tables
        // are gone), the second cannot (its tables are in the way).
        let creating: Vec<&Migration> = ALL.iter().filter(|m| !tables(m).is_empty()).collect();
        let (first, second) = (creating[creating.len() - 2], creating[creating.len() - 1]);
        for m in [first, second] {
            db.exec("DELETE FROM _migrations WHERE name = ?", vec![m.name.into()]).unwrap();
        }
        for table in tables(first) {
            run(db, format!("DROP TABLE {table}")).unwrap();
        }
        assert!(!tables(first).is_empty() && !tables(second).is_empty());
        assert!(apply(db, 2).is_err());
        assert_eq!(recorded(db), ALL.len() as i64 - 2, "nothing recorded");
        for table in tables(first) {
            assert!(run(db, format!("SELECT 1 FROM {table}")).is_err(), "{table} rolled back");
        }
    }
}
