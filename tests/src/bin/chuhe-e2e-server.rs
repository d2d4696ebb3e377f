//! The server as a child process for the kill tests: `chuhe-e2e-server DB_URL`
//! binds 127.0.0.1:0, prints `listening ADDR`, serves until killed or stdin closes. A second
//! argument `single` runs it on tokio's single-threaded scheduler (what `chuhe serve` uses on
//! one CPU), `multi` (the default) on the work-stealing one.

use std::sync::Arc;

use chuhe_server::store_adapter::StoreAdapter;
use chuhe_server::{Config, Deps, serve};
use tokio::io::AsyncReadExt;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: chuhe-e2e-server DB_URL [single|multi]"))?;
    let rt = match args.next().as_deref() {
        None | Some("multi") => tokio::runtime::Builder::new_multi_thread(),
        Some("single") => tokio::runtime::Builder::new_current_thread(),
        Some(other) => anyhow::bail!("scheduler must be single or multi, not {other:?}"),
    }
    .enable_all()
    .build()?;
    rt.block_on(run(url))
}

async fn run(url: String) -> anyhow::Result<()> {
    let store = chuhe_store::open(&url, &chuhe_store::StoreOptions::default()).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening {}", listener.local_addr()?);
    let shutdown = async {
        let mut buf = [0u8; 16];
        let mut stdin = tokio::io::stdin();
        let _ = stdin.read(&mut buf).await;
    };
    serve(
        listener,
        shutdown,
        Deps {
            persist: Arc::new(StoreAdapter::new(Arc::new(store))),
            config: Config::default(),
            cluster: None,
        },
    )
    .await?;
    Ok(())
}
