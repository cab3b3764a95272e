/* The appliance's single executable: this launcher with the PyInstaller one-folder bundle appended
 * as zstd (packaging/pack.py writes it; docs/packaging.md explains the choice).
 *
 * First start of a build: the bundle is unpacked once into a cache folder named after the build's
 * hash; every later start checks that folder (one stat per file) and execs the bundle's own
 * executable, so a start costs what a PyInstaller one-folder start costs.
 *
 * Cache root, first usable of: $XDG_CACHE_HOME/appliance, $HOME/.cache/appliance, ${TMPDIR:-/tmp}/appliance-<uid>. A root is used only when it is a real
 * folder (no symlink) owned by this user and writable by nobody else. When none can be used (a
 * read-only home and no writable temporary folder of our own), the bundle is unpacked into a private
 * temporary folder for this run and removed after it, as a PyInstaller one-file does.
 *
 * Concurrent first starts each unpack into their own ".tmp-<build>-<pid>" folder and rename it into
 * place; rename is atomic, the loser removes its copy and uses the winner's. A new build has a new
 * hash, hence a new folder; after unpacking one, builds older than the two newest are removed.
 *
 * The payload is one or more zstd frames back to back, which decode as one byte stream (each frame's
 * checksum is verified): one record after another, little-endian:
 *   'D' mode:u32 len:u32 path              a folder
 *   'F' mode:u32 len:u32 path size:u64 data a regular file
 *   'L' 0:u32    len:u32 path len:u32 target a symbolic link
 *   'E'                                      the end
 * (nothing may follow 'E'; the decoder still reads every frame to check its integrity)
 * Trailer, the file's last 64 bytes: "APPLPK02" offset:u64 size:u64 build:40 bytes (hex, NUL padded).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define MAGIC "APPLPK02"
/* The packer's long-distance window (zstd --long=27, 128 MB): the decoder accepts no larger one. */
#define WINDOW_LOG_MAX 27
#define TRAILER_SIZE 64
#define BUILD_LEN 40
#define KEEP_BUILDS 2

static void die(const char *what) {
    fprintf(stderr, "appliance launcher: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(127);
}

/* ---- the payload, read through libzstd ------------------------------------------------------ */

typedef struct {
    int fd;
    uint64_t left; /* compressed bytes not read yet */
    ZSTD_DStream *ds;
    size_t last;   /* zstd's last answer: 0 once a frame is fully decoded and flushed */
    uint8_t in[1 << 17];
    size_t in_pos, in_len;
    uint8_t out[1 << 17];
    size_t out_pos, out_len;
    int finished;
} Payload;

static void payload_open(Payload *p, int fd, uint64_t offset, uint64_t size) {
    memset(p, 0, sizeof *p);
    p->fd = fd;
    p->left = size;
    p->last = 1; /* no frame decoded yet: an empty payload is a damaged one */
    if (lseek(fd, (off_t)offset, SEEK_SET) < 0) die("seek to the bundle");
    p->ds = ZSTD_createDStream();
    if (!p->ds || ZSTD_isError(ZSTD_DCtx_setParameter(p->ds, ZSTD_d_windowLogMax, WINDOW_LOG_MAX)))
        die("zstd decoder");
}

/* Fills the output buffer (less only at the payload's end); 0 when nothing is left. */
static int payload_fill(Payload *p) {
    if (p->finished) return 0;
    ZSTD_outBuffer out = {p->out, sizeof p->out, 0};
    while (out.pos < out.size) {
        if (p->in_pos == p->in_len && p->left > 0) {
            size_t want = p->left < sizeof p->in ? (size_t)p->left : sizeof p->in;
            ssize_t got = read(p->fd, p->in, want);
            if (got <= 0) die("read the bundle");
            p->left -= (uint64_t)got;
            p->in_pos = 0;
            p->in_len = (size_t)got;
        }
        int input_done = p->in_pos == p->in_len && p->left == 0;
        if (input_done && p->last == 0) {
            p->finished = 1;
            break;
        }
        size_t out_before = out.pos;
        ZSTD_inBuffer in = {p->in, p->in_len, p->in_pos};
        size_t ret = ZSTD_decompressStream(p->ds, &out, &in);
        p->in_pos = in.pos;
        errno = 0;
        if (ZSTD_isError(ret)) die("the bundle is damaged (zstd)");
        p->last = ret;
        if (input_done && out.pos == out_before && ret != 0) die("the bundle ends early (zstd)");
    }
    p->out_pos = 0;
    p->out_len = out.pos;
    return p->out_len > 0;
}

static void payload_close(Payload *p) { ZSTD_freeDStream(p->ds); }

static void payload_read(Payload *p, void *buf, size_t n) {
    uint8_t *dst = buf;
    while (n > 0) {
        if (p->out_pos == p->out_len && !payload_fill(p)) {
            errno = 0;
            die("the bundle ends early");
        }
        size_t take = p->out_len - p->out_pos < n ? p->out_len - p->out_pos : n;
        memcpy(dst, p->out + p->out_pos, take);
        p->out_pos += take;
        dst += take;
        n -= take;
    }
}

static uint32_t payload_u32(Payload *p) {
    uint8_t b[4];
    payload_read(p, b, 4);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t payload_u64(Payload *p) {
    uint64_t low = payload_u32(p);
    return low | (uint64_t)payload_u32(p) << 32;
}

/* A relative path without "..", "." or empty components: the bundle never leaves its folder. */
static void payload_path(Payload *p, char *path, size_t cap) {
    uint32_t len = payload_u32(p);
    errno = 0;
    if (len == 0 || len >= cap) die("a path in the bundle is too long");
    payload_read(p, path, len);
    path[len] = '\0';
    if (path[0] == '/' || strlen(path) != len) die("a path in the bundle is not relative");
    for (const char *c = path; c; c = strchr(c, '/')) {
        if (*c == '/') c++;
        if (*c == '/' || *c == '\0' || (c[0] == '.' && (c[1] == '/' || c[1] == '\0')) ||
            (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0')))
            die("a path in the bundle leaves its folder");
    }
}

/* ---- unpacking ------------------------------------------------------------------------------- */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *path) { nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS); }

static void write_all(int fd, const void *buf, size_t n) {
    const char *c = buf;
    while (n > 0) {
        ssize_t put = write(fd, c, n);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) die("write a bundle file");
        c += put;
        n -= (size_t)put;
    }
}

/* Unpacks the payload into dir (which must not exist) and writes dir/.files: "size path" a line. */
static int unpack(int self, uint64_t offset, uint64_t size, const char *dir) {
    if (mkdir(dir, 0700) != 0) return -1;
    Payload *p = malloc(sizeof *p);
    if (!p) die("memory");
    payload_open(p, self, offset, size);
    char rel[PATH_MAX], path[PATH_MAX * 2], target[PATH_MAX];
    char list_path[PATH_MAX];
    snprintf(list_path, sizeof list_path, "%s/.files", dir);
    FILE *list = fopen(list_path, "w");
    if (!list) die("write the file list");
    static uint8_t buf[1 << 16];
    for (;;) {
        char kind;
        payload_read(p, &kind, 1);
        if (kind == 'E') break;
        uint32_t mode = payload_u32(p) & 07777;
        payload_path(p, rel, sizeof rel);
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        if (kind == 'D') {
            if (mkdir(path, (mode_t)(mode | 0700)) != 0 && errno != EEXIST) die(path);
        } else if (kind == 'F') {
            uint64_t left = payload_u64(p);
            fprintf(list, "%llu %s\n", (unsigned long long)left, rel);
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)(mode | 0400));
            if (fd < 0) die(path);
            while (left > 0) {
                size_t take = left < sizeof buf ? (size_t)left : sizeof buf;
                payload_read(p, buf, take);
                write_all(fd, buf, take);
                left -= take;
            }
            if (close(fd) != 0) die(path);
        } else if (kind == 'L') {
            uint32_t len = payload_u32(p);
            errno = 0;
            if (len == 0 || len >= sizeof target) die("a link in the bundle is too long");
            payload_read(p, target, len);
            target[len] = '\0';
            if (target[0] == '/') die("a link in the bundle points outside it");
            if (symlink(target, path) != 0) die(path);
        } else {
            errno = 0;
            die("the bundle has an unknown record");
        }
    }
    /* Decode to the end: every stream's check is verified and nothing follows the end record. */
    errno = 0;
    if (p->out_pos != p->out_len || payload_fill(p)) die("the bundle has data after its end");
    if (fclose(list) != 0) die("write the file list");
    payload_close(p);
    free(p);
    return 0;
}

/* dir holds every file of its list with the listed size (a temp cleaner may have removed some). */
static int intact(const char *dir) {
    char list_path[PATH_MAX], line[PATH_MAX + 32], path[PATH_MAX * 2];
    snprintf(list_path, sizeof list_path, "%s/.files", dir);
    FILE *list = fopen(list_path, "r");
    if (!list) return 0;
    int ok = 1, any = 0;
    while (ok && fgets(line, sizeof line, list)) {
        char *space = strchr(line, ' ');
        size_t len = strlen(line);
        if (!space || len < 2 || line[len - 1] != '\n') {
            ok = 0;
            break;
        }
        line[len - 1] = '\0';
        unsigned long long expected = strtoull(line, NULL, 10);
        snprintf(path, sizeof path, "%s/%s", dir, space + 1);
        struct stat st;
        ok = lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (unsigned long long)st.st_size == expected;
        any = 1;
    }
    fclose(list);
    return ok && any;
}

/* A folder we may trust: a real folder owned by us that nobody else can write into. */
static int trusted_dir(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 022) == 0;
}

static int make_dirs(const char *path) {
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -1;
    for (char *c = tmp + 1; *c; c++) {
        if (*c != '/') continue;
        *c = '\0';
        if (mkdir(tmp, 0700) != 0 && errno != EEXIST) return -1;
        *c = '/';
    }
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST) return -1;
    return 0;
}

/* Leftovers of interrupted unpacks (".tmp-*-PID", ".old-*-PID" whose process is gone) and builds
 * older than the KEEP_BUILDS newest (by the time they were unpacked). */
static void tidy(const char *root, const char *current) {
    DIR *d = opendir(root);
    if (!d) return;
    struct dirent *e;
    char path[PATH_MAX * 2];
    char *names[256];
    time_t times[256];
    int n = 0;
    while ((e = readdir(d))) {
        snprintf(path, sizeof path, "%s/%s", root, e->d_name);
        if (strncmp(e->d_name, ".tmp-", 5) == 0 || strncmp(e->d_name, ".old-", 5) == 0) {
            const char *dash = strrchr(e->d_name, '-');
            long pid = dash ? strtol(dash + 1, NULL, 10) : 0;
            if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) remove_tree(path);
        } else if (strlen(e->d_name) == strlen(current) && strcmp(e->d_name, current) != 0 &&
                   strspn(e->d_name, "0123456789abcdef") == strlen(current) && n < 256) {
            struct stat st;
            char files[PATH_MAX * 2 + 8];
            snprintf(files, sizeof files, "%s/.files", path);
            if (stat(files, &st) != 0) continue;
            names[n] = strdup(e->d_name);
            times[n++] = st.st_mtime;
        }
    }
    closedir(d);
    /* The current build counts as one of the kept: remove all but the (KEEP_BUILDS - 1) newest others. */
    for (int kept = 0; kept < KEEP_BUILDS - 1 && n > 0; kept++) {
        int newest = 0;
        for (int i = 1; i < n; i++)
            if (times[i] > times[newest]) newest = i;
        free(names[newest]);
        names[newest] = names[--n];
        times[newest] = times[n];
    }
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", root, names[i]);
        remove_tree(path);
        free(names[i]);
    }
}

/* The build's folder under root, unpacked now if needed; 0 when root cannot hold it. */
static int prepare(const char *root, const char *build, int self, uint64_t offset, uint64_t size,
                   char *out, size_t cap) {
    if (strlen(root) > PATH_MAX - 128 || make_dirs(root) != 0 || !trusted_dir(root)) return 0;
    snprintf(out, cap, "%s/%s", root, build);
    if (trusted_dir(out) && intact(out)) return 1;
    if (access(root, W_OK) != 0) return 0;
    char fresh[PATH_MAX], stale[PATH_MAX];
    snprintf(fresh, sizeof fresh, "%s/.tmp-%s-%ld", root, build, (long)getpid());
    snprintf(stale, sizeof stale, "%s/.old-%s-%ld", root, build, (long)getpid());
    remove_tree(fresh);
    if (unpack(self, offset, size, fresh) != 0) {
        remove_tree(fresh);
        return 0;
    }
    if (rename(fresh, out) != 0) {
        /* Another start won the race, or a damaged copy is in the way: move it aside and retry. */
        if (trusted_dir(out) && intact(out)) {
            remove_tree(fresh);
            return 1;
        }
        if (rename(out, stale) == 0) remove_tree(stale);
        if (rename(fresh, out) != 0) {
            remove_tree(fresh);
            return trusted_dir(out) && intact(out);
        }
    }
    tidy(root, build);
    return 1;
}

/* ---- running --------------------------------------------------------------------------------- */

static pid_t child;

static void forward(int sig) {
    if (child > 0) kill(child, sig);
}

/* No cache could be used: unpack for this run only, run the bundle, remove it afterwards. */
static int run_private(int self, uint64_t offset, uint64_t size, char **argv) {
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX], bundle[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/appliance-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) die("create a temporary folder");
    char inner[PATH_MAX];
    snprintf(inner, sizeof inner, "%s/b", dir);
    if (unpack(self, offset, size, inner) != 0) die("unpack the bundle");
    close(self);
    snprintf(bundle, sizeof bundle, "%s/appliance", inner);
    child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        execv(bundle, argv);
        die(bundle);
    }
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], forward);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    remove_tree(dir);
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        raise(WTERMSIG(status));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv) {
    (void)argc;
    char self_path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n <= 0) die("find my own file");
    self_path[n] = '\0';
    int self = open(self_path, O_RDONLY | O_CLOEXEC);
    if (self < 0) die(self_path);
    uint8_t trailer[TRAILER_SIZE];
    off_t end = lseek(self, 0, SEEK_END);
    if (end < TRAILER_SIZE || pread(self, trailer, TRAILER_SIZE, end - TRAILER_SIZE) != TRAILER_SIZE ||
        memcmp(trailer, MAGIC, 8) != 0) {
        errno = 0;
        die("no bundle is appended to this launcher");
    }
    uint64_t offset = 0, size = 0;
    for (int i = 7; i >= 0; i--) {
        offset = offset << 8 | trailer[8 + i];
        size = size << 8 | trailer[16 + i];
    }
    char build[BUILD_LEN + 1];
    memcpy(build, trailer + 24, BUILD_LEN);
    build[BUILD_LEN] = '\0';
    if (strlen(build) == 0 || strspn(build, "0123456789abcdef") != strlen(build)) {
        errno = 0;
        die("the bundle's build id is malformed");
    }
    /* No APPLIANCE_* variable of its own: the appliance refuses every one it does not know. */
    char roots[3][PATH_MAX];
    int count = 0;
    const char *env;
    if ((env = getenv("XDG_CACHE_HOME")) && env[0] == '/')
        snprintf(roots[count++], PATH_MAX, "%s/appliance", env);
    if ((env = getenv("HOME")) && env[0] == '/') snprintf(roots[count++], PATH_MAX, "%s/.cache/appliance", env);
    env = getenv("TMPDIR");
    snprintf(roots[count++], PATH_MAX, "%s/appliance-%ld", env && env[0] == '/' ? env : "/tmp", (long)geteuid());

    char dir[PATH_MAX], bundle[PATH_MAX + 16];
    for (int i = 0; i < count; i++) {
        if (prepare(roots[i], build, self, offset, size, dir, sizeof dir)) {
            close(self);
            snprintf(bundle, sizeof bundle, "%s/appliance", dir);
            execv(bundle, argv);
            die(bundle);
        }
    }
    return run_private(self, offset, size, argv);
}
