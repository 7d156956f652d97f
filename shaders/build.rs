//! Compiles every shader in this directory (`*.comp`, `*.vert`, `*.frag`, the ray-tracing
//! stages `*.rgen`, `*.rmiss`, `*.rchit`, and the mesh-shading stages `*.task`, `*.mesh`) to
//! SPIR-V in OUT_DIR with `glslangValidator -V`.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let mut shaders: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read the shaders directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| {
                [
                    "comp", "vert", "frag", "rgen", "rmiss", "rchit", "task", "mesh",
                ]
                .contains(&e.to_str().unwrap_or(""))
            })
        })
        .collect();
    shaders.sort();
    for src in shaders {
        println!("cargo:rerun-if-changed={}", src.display());
        let name = src
            .file_name()
            .expect("file name")
            .to_string_lossy()
            .into_owned();
        let spv = out.join(format!("{name}.spv"));
        let mut command = Command::new("glslangValidator");
        command.arg("-V");
        // Ray tracing and mesh shading need SPIR-V 1.4 (Vulkan 1.2); the other shaders keep
        // glslang's default.
        if name.starts_with("ray_") || name.starts_with("mesh_") {
            command.args(["--target-env", "vulkan1.2"]);
        }
        let status = command.arg("-o").arg(&spv).arg(&src).status();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => panic!("glslangValidator failed on {} ({s})", src.display()),
            Err(e) => panic!(
                "cannot run glslangValidator ({e}): the shaders of vk-baton's examples and tests are compiled at build time. \
                 Install it (Debian/Ubuntu: `apt-get install glslang-tools`) or put it on PATH."
            ),
        }
    }
    // Files the shaders `#include`.
    for entry in std::fs::read_dir(&dir).expect("read the shaders directory") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "glsl") {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    // The directory too, so a newly added shader triggers a rebuild.
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed=build.rs");
}
