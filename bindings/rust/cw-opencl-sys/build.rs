// SPDX-License-Identifier: MIT
//! Finds the installed cw through pkg-config (`cw-opencl.pc`, which also
//! brings OpenCL's flags through its `Requires`) and tells rustc where to
//! link from. Nothing is compiled here.

use std::env;
use std::process::Command;

fn pkg_config(args: &[&str]) -> String {
    let tool = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let out = Command::new(&tool).args(args).arg("cw-opencl").output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => panic!(
            "cw-opencl-sys: `{} {} cw-opencl` failed: {}\n\
             Install cw (cmake --install <build> --prefix <prefix>) and point \
             PKG_CONFIG_PATH at <prefix>/lib/pkgconfig.",
            tool,
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => panic!(
            "cw-opencl-sys: cannot run `{}` ({}): install pkg-config",
            tool, e
        ),
    }
}

fn main() {
    for var in [
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "PKG_CONFIG_SYSROOT_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={}", var);
    }
    let libs = pkg_config(&["--libs"]);
    let mut libdirs = Vec::new();
    for flag in libs.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={}", dir);
            libdirs.push(dir.to_string());
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={}", lib);
        }
    }
    let cflags = pkg_config(&["--cflags"]);
    // For dependents (DEP_CW_OPENCL_*) and for this crate's layout test,
    // which compiles a C program against the same headers.
    println!("cargo:cflags={}", cflags);
    println!("cargo:libdirs={}", libdirs.join(":"));
    println!("cargo:rustc-env=CW_OPENCL_SYS_CFLAGS={}", cflags);
    println!("cargo:rustc-env=CW_OPENCL_SYS_LIBS={}", libs);
    println!(
        "cargo:rustc-env=CW_OPENCL_SYS_VERSION={}",
        pkg_config(&["--modversion"])
    );
}
