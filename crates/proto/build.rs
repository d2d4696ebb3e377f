//! Compiles `proto/chuhe/v1/*.proto` (repo root) with protox (pure Rust, no
//! `protoc`), generates prost types and pbjson serde impls (proto3 JSON).

use std::path::PathBuf;

use prost::Message as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto");
    let files = [
        "chuhe/v1/game.proto",
        "chuhe/v1/ws.proto",
        "chuhe/v1/admin.proto",
        "chuhe/v1/storage.proto",
        "chuhe/v1/node.proto",
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={}", root.join(f).display());
    }
    let fds = protox::compile(files, [&root])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let descriptor_bytes = fds.encode_to_vec();
    std::fs::write(out.join("chuhe_descriptor.bin"), &descriptor_bytes)?;

    prost_build::Config::new().compile_fds(fds)?;
    pbjson_build::Builder::new()
        .register_descriptors(&descriptor_bytes)?
        // Unknown fields are ignored (forward compatibility): a message kind
        // this server does not know decodes as "no kind" → `unknown_message`.
        .ignore_unknown_fields()
        .build(&[".chuhe.v1"])?;
    Ok(())
}
