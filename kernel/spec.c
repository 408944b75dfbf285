/* spec.c — moonflow --install-kernel [--user | --prefix DIR]: the
 * kernelspec Jupyter looks for (kernels/moonflow/kernel.json and the
 * logos), naming this binary by its absolute path.
 *
 *   (no option)   /usr/local/share/jupyter/kernels/moonflow (system-wide)
 *   --user        $JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter or
 *                 ~/.local/share/jupyter, then kernels/moonflow
 *   --prefix DIR  DIR/share/jupyter/kernels/moonflow (a virtualenv, a test)
 *
 * The logos are drawn here (a crescent moon) and written as PNG with zlib,
 * so the install needs no file beside the binary. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <zlib.h>

#include "core/err.h"
#include "core/io/write_file.h"
#include "kernel/kernel.h"

/* The kernelspec directory for the options, in 'dir'; 0 or -1 (printed). */
static int spec_dir(char **args, char *dir, size_t size)
{
    const char *base = NULL, *suffix = "";
    char home_data[PATH_MAX];
    if (args[0] == NULL) {
        base = "/usr/local/share/jupyter";
    } else if (strcmp(args[0], "--user") == 0 && args[1] == NULL) {
        const char *jd = getenv("JUPYTER_DATA_DIR"), *xdg = getenv("XDG_DATA_HOME");
        const char *home = getenv("HOME");
        if (jd && *jd)
            base = jd;
        else if (xdg && *xdg)
            snprintf(home_data, sizeof home_data, "%s/jupyter", xdg), base = home_data;
        else if (home && *home)
            snprintf(home_data, sizeof home_data, "%s/.local/share/jupyter", home),
                base = home_data;
        if (base == NULL) {
            fprintf(stderr, "moonflow: --install-kernel --user: HOME is not set\n");
            return -1;
        }
    } else if (strcmp(args[0], "--prefix") == 0 && args[1] && args[2] == NULL) {
        base = args[1];
        suffix = "/share/jupyter";
    } else {
        fprintf(stderr, "moonflow: --install-kernel: expected no option, --user or --prefix "
                "DIR, got '%s'\n", args[0]);
        return -1;
    }
    if ((size_t)snprintf(dir, size, "%s%s/kernels/moonflow", base, suffix) >= size) {
        fprintf(stderr, "moonflow: --install-kernel: the path is too long\n");
        return -1;
    }
    return 0;
}

static char *kernel_json(const char *binary)
{
    cJSON *spec = cJSON_CreateObject();
    cJSON *argv = cJSON_AddArrayToObject(spec, "argv");
    const char *words[] = {binary, "--kernel", "-f", "{connection_file}"};
    for (int i = 0; i < 4; i++)
        cJSON_AddItemToArray(argv, cJSON_CreateString(words[i]));
    cJSON_AddStringToObject(spec, "display_name", "moonflow (Lua 5.4)");
    cJSON_AddStringToObject(spec, "language", "lua");
    cJSON_AddStringToObject(spec, "interrupt_mode", "signal");
    cJSON_AddObjectToObject(spec, "metadata");
    char *text = cJSON_Print(spec);
    cJSON_Delete(spec);
    return text;
}

/* Appends a PNG chunk to 'out' at '*at'. */
static void png_chunk(unsigned char *out, size_t *at, const char *type, const unsigned char *data,
                      size_t len)
{
    unsigned char *p = out + *at;
    p[0] = (unsigned char)(len >> 24);
    p[1] = (unsigned char)(len >> 16);
    p[2] = (unsigned char)(len >> 8);
    p[3] = (unsigned char)len;
    memcpy(p + 4, type, 4);
    if (len)
        memcpy(p + 8, data, len);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), p + 4, (uInt)(len + 4));
    p[8 + len] = (unsigned char)(crc >> 24);
    p[9 + len] = (unsigned char)(crc >> 16);
    p[10 + len] = (unsigned char)(crc >> 8);
    p[11 + len] = (unsigned char)crc;
    *at += 12 + len;
}

/* A size x size RGBA crescent: a disc less a disc shifted up and right. */
static void draw_moon(unsigned char *rows, int size)
{
    double r = 0.42 * size, c = 0.5 * size, dx = 0.22 * size, dy = -0.16 * size;
    for (int y = 0; y < size; y++) {
        unsigned char *row = rows + (size_t)y * (4 * (size_t)size + 1);
        row[0] = 0;   /* filter: none */
        for (int x = 0; x < size; x++) {
            double px = x + 0.5 - c, py = y + 0.5 - c;
            int in = px * px + py * py <= r * r &&
                     (px - dx) * (px - dx) + (py - dy) * (py - dy) > 0.8 * r * r;
            unsigned char *p = row + 1 + 4 * x;
            p[0] = 0x2b, p[1] = 0x4c, p[2] = 0x9a, p[3] = in ? 255 : 0;
        }
    }
}

static int write_logo(const char *dir, int size)
{
    size_t raw_len = (size_t)size * (4 * (size_t)size + 1);
    uLongf z_len = compressBound((uLong)raw_len);
    unsigned char *raw = malloc(raw_len), *z = malloc(z_len), *png = malloc(z_len + 64);
    int rc = -1;
    if (raw && z && png) {
        draw_moon(raw, size);
        if (compress(z, &z_len, raw, (uLong)raw_len) == Z_OK) {
            static const unsigned char sig[8] = {137, 'P', 'N', 'G', '\r', '\n', 26, '\n'};
            unsigned char ihdr[13] = {0, 0, 0, (unsigned char)size, 0, 0, 0, (unsigned char)size,
                                      8, 6, 0, 0, 0};
            size_t at = 8;
            memcpy(png, sig, 8);
            png_chunk(png, &at, "IHDR", ihdr, sizeof ihdr);
            png_chunk(png, &at, "IDAT", z, z_len);
            png_chunk(png, &at, "IEND", NULL, 0);
            char path[PATH_MAX + 32];
            snprintf(path, sizeof path, "%s/logo-%dx%d.png", dir, size, size);
            rc = mf_write_file_atomic("install-kernel", path, png, at) == MF_OK ? 0 : -1;
        }
    }
    free(raw);
    free(z);
    free(png);
    return rc;
}

int mf_kernel_install(char **args)
{
    char dir[PATH_MAX], binary[PATH_MAX], path[PATH_MAX + 32];
    if (spec_dir(args, dir, sizeof dir) != 0)
        return EXIT_FAILURE;
    if (realpath("/proc/self/exe", binary) == NULL) {
        fprintf(stderr, "moonflow: --install-kernel: cannot find this program's path\n");
        return EXIT_FAILURE;
    }
    char *json = kernel_json(binary);
    snprintf(path, sizeof path, "%s/kernel.json", dir);
    int ok = json && mf_make_dirs("install-kernel", dir) == MF_OK &&
             mf_write_file_atomic("install-kernel", path, json, strlen(json)) == MF_OK &&
             write_logo(dir, 32) == 0 && write_logo(dir, 64) == 0;
    free(json);
    if (!ok) {
        fprintf(stderr, "moonflow: %s\n", mf_err_msg());
        return EXIT_FAILURE;
    }
    printf("Installed the moonflow kernelspec in %s\n", dir);
    return EXIT_SUCCESS;
}
