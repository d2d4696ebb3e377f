//! The server as a child process for the kill tests: `chuhe-e2e-server DB_URL`
//! binds 127.0.0.1:0, prints `listening ADDR`, serves until killed or stdin closes.

use std::sync::Arc;

use chuhe_server::store_adapter::StoreAdapter;
use chuhe_server::{Config, Deps, serve};
use tokio::io::AsyncReadExt;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: chuhe-e2e-server DB_URL"))?;
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
        },
    )
    .await?;
    Ok(())
}
