//! Key rotation under load (issue 34 §1): workers fetch fresh tokens from the provider and
//! verify them while the provider rotates its signing keys twice (11 s apart, past the
//! unknown-`kid` cooldown): no valid token may be refused.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{agent_token, identity, kid_of, now, op_config};
use crate::support::oidc::Op;

const WORKERS: usize = 6;
/// Each worker stops after this many tokens, or when the run ends.
const MAX_TOKENS_PER_WORKER: u64 = 20_000;

#[derive(Default)]
struct Figures {
    verified: AtomicU64,
    refused: AtomicU64,
    kids: std::sync::Mutex<std::collections::BTreeSet<String>>,
    first_refusal: std::sync::Mutex<Option<String>>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_in_the_middle_of_a_load_run_refuses_no_valid_token() {
    let op = Arc::new(Op::start(op_config()).await);
    let mut issuers = askgate::server::auth::Issuers::new(
        &identity(&[&op], json!({})),
        reqwest::Client::new(),
        10_000,
    );
    issuers.start_refresh();
    let issuers = Arc::new(issuers);
    let figures = Arc::new(Figures::default());
    let stop = Arc::new(AtomicBool::new(false));

    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (op, issuers, figures, stop) =
                (op.clone(), issuers.clone(), figures.clone(), stop.clone());
            tokio::spawn(async move {
                for _ in 0..MAX_TOKENS_PER_WORKER {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let token = agent_token(&op).await;
                    match issuers.verify(&token, now()).await {
                        Ok(_) => figures.verified.fetch_add(1, Ordering::Relaxed),
                        Err(error) => {
                            figures
                                .first_refusal
                                .lock()
                                .unwrap()
                                .get_or_insert(error.to_string());
                            figures.refused.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                    figures.kids.lock().unwrap().insert(kid_of(&token));
                }
            })
        })
        .collect();

    let started = Instant::now();
    let mut rotations = Vec::new();
    for at in [Duration::from_secs(3), Duration::from_secs(14)] {
        tokio::time::sleep(at.saturating_sub(started.elapsed())).await;
        rotations.push((figures.verified.load(Ordering::Relaxed), op.rotate().await));
    }
    tokio::time::sleep(Duration::from_secs(18).saturating_sub(started.elapsed())).await;
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        tokio::time::timeout(Duration::from_secs(30), worker)
            .await
            .unwrap()
            .unwrap();
    }

    let verified = figures.verified.load(Ordering::Relaxed);
    let refused = figures.refused.load(Ordering::Relaxed);
    let kids = figures.kids.lock().unwrap().len();
    let stats = op.stats().await;
    println!(
        "rotation under load: {WORKERS} workers, {:.1} s, {} rotations (after {} and {} tokens): \
         {verified} tokens verified, {refused} refused, {refused} refused wrongly; {kids} signing \
         keys seen; the provider served {} key sets",
        started.elapsed().as_secs_f64(),
        rotations.len(),
        rotations[0].0,
        rotations[1].0,
        stats["jwks"],
    );
    assert_eq!(
        refused,
        0,
        "a valid token was refused: {:?}",
        figures.first_refusal.lock().unwrap()
    );
    assert_eq!(kids, 3, "tokens from all three signing keys were verified");
    assert!(verified > 100, "the run verified {verified} tokens");
}
