# Front end to CMake.  `make demo` and `make test` install what is missing
# (Debian packages, as root), build into build/, and run.
BUILD ?= build
ASAN_BUILD ?= build-asan
RELEASE_BUILD ?= build-release
CLANG_BUILD ?= build-clang
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")

.PHONY: all deps build demo test test-asan test-release test-clang install generate docs clean

all: build

deps:
	@sh scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The mapping model on the paper's example first, the reordering of a stencil
# on round-robin placement (part 6, 16 ranks on 4 emulated nodes), then the
# showcase placed by the model on a modelled 2x2 torus of dual-core nodes,
# ending with the memory report.
demo: build
	$(BUILD)/bin/leanmpi-map --network torus:8x16x32 --cores 4 --pattern 2d-nn:128x128:star --show TXYZ,XYZT,TZXY
	$(BUILD)/bin/mpiexec -n 16 --oversubscribe --network flat:4 --cores 4 --map-by node -genv LMPI_VNODE_LINK 2:0.5 \
		$(BUILD)/examples/showcase stencil
	@if [ -x $(BUILD)/examples/fortran_sections ]; then $(BUILD)/bin/mpiexec -n 2 $(BUILD)/examples/fortran_sections; \
	else echo "== 10. Fortran: skipped (no Fortran compiler when LeanMPI was built)"; fi
	@echo "== 11. Surviving a failure: rank 2 of 4 is killed; the others revoke, shrink, roll back to a buddy's checkpoint"
	-$(BUILD)/bin/mpiexec --with-ft ulfm -n 4 $(BUILD)/examples/ulfm_solver 2 25
	LMPI_MEMORY_REPORT=1 $(BUILD)/bin/mpiexec -n 4 --network torus:2x2 --cores 2 --pattern 2d-nn:2x2:box \
		--map-by auto $(BUILD)/examples/showcase

# Developers and CI build with warnings as errors (LMPI_WERROR); a user's
# plain build does not.
test: deps
	@cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLMPI_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	@$(MAKE) --no-print-directory test-asan test-release test-clang

# The unit tests once more under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Debug -DLMPI_SANITIZE=ON -DLMPI_UNIT_ONLY=ON -DLMPI_WERROR=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest -L unit --output-on-failure -j $(JOBS)

# A user's Release build (-O3 warns where -O2 does not): it must compile
# without a warning, and its unit tests pass.
test-release: deps
	@cmake -S . -B $(RELEASE_BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Release -DLMPI_WERROR=ON >/dev/null
	@cmake --build $(RELEASE_BUILD) -j $(JOBS)
	cd $(RELEASE_BUILD) && ctest -L unit --output-on-failure -j $(JOBS)

# The unit tests built by clang too, where it is installed (scripts/install-deps.sh
# installs it when it can).
test-clang: deps
	@sh scripts/install-deps.sh clang
	@if command -v clang >/dev/null 2>&1; then \
	  CC=clang cmake -S . -B $(CLANG_BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLMPI_UNIT_ONLY=ON -DLMPI_WERROR=ON >/dev/null && \
	  cmake --build $(CLANG_BUILD) -j $(JOBS) && (cd $(CLANG_BUILD) && ctest -L unit --output-on-failure -j $(JOBS)); \
	else echo "clang is not installed: unit tests not built with clang"; fi

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# Regenerate mpi.h and the bindings from src/binding/*.txt, and the Fortran
# bindings from the MPI Forum's apis.json (pympistandard, installed by deps).
generate: deps
	python3 src/binding/gen_bindings.py
	/opt/peers/pympistandard/bin/python3 src/fortran/gen_fortran.py

docs: build
	$(BUILD)/bin/leanmpi_info --config-markdown > docs/env.md

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(RELEASE_BUILD) $(CLANG_BUILD)
