"""False positives: everyday commands of an agent at work (git, builds, package managers, pipelines) stay safe."""

from __future__ import annotations

import pytest
from hermes_plugin_terminal.danger import Level, classify

EVERYDAY: list[str] = [
    # looking around
    "ls", "ls -la", "ls -lah ~/projects", "ls -1 src | wc -l", "pwd", "cd src && ls", "cd .. && make",
    "cat README.md", "cat package.json | jq .scripts", "head -n 20 app.log", "tail -f /var/log/syslog",
    "tail -n 100 logs/server.log | grep ERROR", "less README.md", "wc -l src/*.py", "file image.png",
    "stat setup.py", "du -sh node_modules", "du -h --max-depth=1 . | sort -h", "df -h", "free -m", "uptime",
    "whoami", "id", "hostname", "uname -a", "date +%Y-%m-%d", "tree -L 2", "history | tail", "clear", "true",
    "exit 0", "sleep 5",
    # searching
    'grep -rn "TODO" src/', "grep -ri 'import os' --include='*.py' .", "grep -c foo file.txt",
    'rg -n "fn main" src', "rg --files | head", "find . -name '*.py' -not -path './.venv/*'",
    "find src -type f -name '*.ts' | xargs wc -l", "find . -mtime -1 -type f", "find . -name '*.log' -print",
    "fd -e md", "ag needle",
    # text processing
    "echo hello", 'echo "$PATH"', "echo $HOME", "printf '%s\\n' a b c", "env | grep PYTHON",
    "sort data.txt | uniq -c | sort -rn | head", "cut -d, -f1 data.csv | sort -u",
    "awk '{print $1}' access.log | sort | uniq -c", "awk -F: '{ print $1 }' /etc/passwd",
    "sed -n '1,20p' file.txt", "sed 's/foo/bar/g' input.txt > output.txt",
    "sed -i 's/version = \"1.0\"/version = \"1.1\"/' pyproject.toml", "tr '[:lower:]' '[:upper:]' < in.txt",
    "diff -u old.txt new.txt", "jq '.items[] | .name' data.json", "yq '.services' docker-compose.yml",
    "tee output.log < input.txt", 'echo "done" >> log.txt', "base64 -d token.txt", "sha256sum dist/*.whl",
    "openssl rand -hex 16", "xargs -n1 echo < list.txt", "seq 1 10 | xargs -I{} echo item {}",
    # the shell's own syntax
    "export FOO=bar", 'export PATH="$HOME/.local/bin:$PATH"', "which python3", "type git", "command -v node",
    'for f in *.md; do echo "$f"; done', "for i in $(seq 1 5); do echo $i; done",
    'while read line; do echo "$line"; done < file.txt', "if [ -f .env ]; then echo found; fi",
    "[ -d build ] || mkdir build", "test -f setup.py && echo yes", 'case "$1" in start) echo go;; esac',
    "FOO=1 BAR=2 ./run.sh", "PYTHONPATH=src python -m app", "export NODE_ENV=production && npm run build",
    "cat <<EOF > config.json\n{\"debug\": true}\nEOF", "cat > notes.md <<'EOF'\n# Notes\n- one\nEOF",
    "time make", "timeout 60 pytest", "nohup python server.py > server.log 2>&1 &", "watch -n 1 date",
    "source .venv/bin/activate", ". .venv/bin/activate", "set -euo pipefail; make",
    # files
    "mkdir -p build/out", "mkdir -p src/components && touch src/components/Button.tsx", "touch notes.txt",
    "cp config.example.yaml config.yaml", "cp -r templates/ out/", "mv old_name.py new_name.py",
    "mv build/app dist/app", "rm build.log", "rm -f *.pyc", "rmdir empty", "ln -s ../shared shared",
    "chmod +x scripts/run.sh", "chmod 644 README.md", "tar czf backup.tgz src/", "tar -xzf archive.tar.gz",
    "tar -tf archive.tar", "unzip -l bundle.zip", "unzip bundle.zip -d out", "zip -r site.zip public/",
    "gzip -k data.csv", "rsync -avz src/ backup/",
    # git
    "git status", "git status --short", "git diff", "git diff --stat HEAD~1", "git log --oneline -10",
    "git log --graph --decorate --all", "git show HEAD", "git add -A", "git add src/app.py",
    'git commit -m "fix: handle empty input"', 'git commit -am "wip"', "git push", "git push origin feature/login",
    "git push -u origin main", "git pull --rebase", "git fetch --all --prune", "git checkout main",
    "git checkout -b feature/x", "git switch -c topic", "git merge --no-ff feature", "git rebase -i HEAD~3",
    "git stash", "git stash pop", "git branch -a", "git branch -d merged-branch", "git tag v1.2.0",
    "git remote -v", "git clone https://github.com/example/repo.git", "git blame src/app.py",
    "git cherry-pick abc123", "git reset HEAD~1", "git -C repo status", "git worktree add ../wt feature",
    "gh pr list", "gh pr create --fill",
    # Python
    "pip install requests", "pip install -e '.[dev]'", "pip install -r requirements.txt", "pip list --outdated",
    "pip freeze > requirements.txt", "python -m pip install --upgrade pip", "python3 -m venv .venv",
    "python manage.py migrate", "python3 script.py --verbose", "python -m pytest -q", "pytest tests/ -k login -x",
    "pytest -n 4 --maxfail=1", "uv sync", "uv run pytest", "poetry install", "poetry run python app.py",
    "ruff check .", "ruff format src", "black .", "mypy src", "flake8 src", "tox -e py311",
    # JavaScript
    "npm install", "npm ci", "npm run build", "npm run dev -- --port 3000", "npm test", "npx tsc --noEmit",
    "npx prettier --write src", "yarn install", "yarn add lodash", "pnpm install", "node server.js",
    "node --version", "deno run main.ts",
    # other toolchains
    "cargo build --release", "cargo test", "cargo clippy -- -D warnings", "cargo fmt", "go build ./...",
    "go test ./... -run TestLogin", "go mod tidy", "go run main.go", "mvn package -DskipTests", "gradle build",
    "./gradlew test", "javac Main.java && java Main", "gcc -O2 -o app main.c", "clang++ -std=c++17 main.cpp -o main",
    "./configure && make && make install DESTDIR=./stage", "cmake -S . -B build",
    "cd build && cmake .. && make -j4", "make", "make test", "make -C docs html", "make clean && make",
    # containers and clusters
    "docker ps", "docker ps -a", "docker build -t myapp .", "docker run --rm -it myapp bash",
    "docker compose up -d", "docker compose logs -f web", "docker exec -it web ls /app", "docker rm -f web",
    "docker images", "kubectl get pods -n staging", "kubectl logs deploy/api", "kubectl describe pod api-123",
    "helm list", "terraform plan", "terraform fmt",
    # network
    "curl -s https://api.example.com/health", "curl -fsSL https://example.com -o page.html",
    "curl -X POST -H 'Content-Type: application/json' -d '{\"a\":1}' http://localhost:8000/api",
    "wget https://example.com/file.tar.gz", "ping -c 3 example.com", "ssh-keygen -t ed25519 -f ./deploy_key -N ''",
    "ssh user@host ls -la", "scp file.txt user@host:/tmp/",
    # processes and services, read-only
    "ps aux | grep python", "ps -ef | grep node | grep -v grep", "top -b -n 1 | head -20", "lsof -i :8080",
    "ss -tlnp", "systemctl status nginx", "journalctl -u nginx --since today", "kill -0 1234", "crontab -l",
    "iptables -L -n",
    # databases, read-only
    'sqlite3 app.db ".tables"', 'psql -c "SELECT count(*) FROM users"', "mysql -e 'SHOW DATABASES'",
    "redis-cli ping",
    # system package managers
    "brew install ripgrep", "sudo apt-get update", "sudo apt-get install -y build-essential", "apt list --installed",
    "code .", "open index.html", "xdg-open report.pdf",
]


#: Inline interpreter one-liners that only compute or print; inline code in languages other than Python still
#: asks, as does Python that reaches ``sys`` or ``platform`` (the false positives that remain).
INLINE_ONE_LINERS: list[str] = [
    "python -c 'print(1)'", "python3 -c 'print(2 ** 64)'", "python3 -c 'import math; print(math.pi)'",
    "python3 -c 'import json; print(json.dumps({\"a\": 1}, indent=2))'",
    "python3 -c 'import datetime; print(datetime.date.today().isoformat())'",
    "python3 -c 'import uuid; print(uuid.uuid4())'", "python3 -c 'import secrets; print(secrets.token_hex(16))'",
    "python3 -c 'import hashlib; print(hashlib.sha256(b\"x\").hexdigest())'",
    "python3 -c 'print(sum(range(100)))'", "python3 -c 'import base64; print(base64.b64encode(b\"hi\"))'",
    "python3 -c 'import sys; print(sys.version)'", "python -c 'import platform; print(platform.system())'",
    "node -e 'console.log(1)'", "perl -e 'print 1'", "ruby -e 'puts 1'",
]


def test_the_everyday_corpus_is_large_and_has_no_duplicates() -> None:
    assert len(EVERYDAY) >= 150
    assert len(EVERYDAY) == len(set(EVERYDAY))


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_command_is_safe(command: str) -> None:
    verdict = classify(command)
    assert (verdict.level, [rule.key for rule in verdict.rules]) == (Level.SAFE, []), verdict.normalized

