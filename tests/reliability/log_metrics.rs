//! The decision log's commit-time histogram in `/metrics` (issue 24): every group commit is
//! counted in one bucket, so a stall that breaks the p99 shows as a commit in a slow bucket.

use super::harness::{read_notes, Service, Setup};
use super::unwritable::metric;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_group_commit_is_in_the_commit_time_histogram() {
    let work = tempfile::tempdir().unwrap();
    let service = Service::start(Setup {
        log_dir: Some(work.path().join("logs")),
        ..Setup::default()
    })
    .await;
    for index in 0..12 {
        let reply = service
            .authorize(&read_notes(&format!("commits-{index}")))
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let text = service.metrics().await;
    let batches = metric(&text, "askgate_log_batches_total");
    assert!(batches >= 1.0, "{text}");
    assert_eq!(metric(&text, "askgate_log_commit_seconds_count"), batches);
    let cumulative: Vec<f64> = text
        .lines()
        .filter(|line| line.starts_with("askgate_log_commit_seconds_bucket{"))
        .map(|line| line.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(cumulative.len(), 11, "{text}");
    assert!(
        cumulative.windows(2).all(|pair| pair[0] <= pair[1]),
        "{text}"
    );
    assert_eq!(
        cumulative.last().copied(),
        Some(batches),
        "+Inf holds them all"
    );
    let phases: f64 = ["wait", "write", "sync", "wake"]
        .iter()
        .map(|phase| {
            metric(
                &text,
                &format!("askgate_log_seconds_total{{phase=\"{phase}\"}}"),
            )
        })
        .sum();
    let sum = metric(&text, "askgate_log_commit_seconds_sum");
    assert!((sum - phases).abs() < 1e-6, "sum {sum}, phases {phases}");
}
