"""Loaders of the public formats the PIC experiments use when a user has the files:
Gowalla / Foursquare TSMC2014 check-ins and MNIST IDX (tested on files generated here)."""

import gzip

import numpy as np
import pytest

from shuffledp.datasets import (
    AUSTIN_SUBSTITUTE_NAME,
    DIGITS_SUBSTITUTE_NAME,
    GOWALLA_SF_BOX,
    austin_checkins,
    load_mnist,
    mnist_or_digits,
    read_foursquare,
    read_gowalla,
    read_idx,
)
from shuffledp.errors import DataError

GOWALLA = (
    "0\t2010-10-19T23:55:27Z\t30.2359091167\t-97.7951395833\t22847\n"
    "0\t2010-10-18T22:17:43Z\t37.6\t-122.45\t420315\n"
    "\n"
    "7\t2010-10-17T23:42:03Z\t37.75\t-122.40\t316637\n"
)
FOURSQUARE = (
    "470\t49bbd6c0f964a520f4531fe3\t4bf58dd8d48988d127951735\tArts & Crafts Store\t40.719810375488535\t-74.00258103213994\t-240\tTue Apr 03 18:00:09 +0000 2012\n"
    "979\t4a43c0aef964a520c6a61fe3\t4bf58dd8d48988d1df941735\tBridge\t40.60679958140643\t-74.04416981025437\t-240\tTue Apr 03 18:00:25 +0000 2012\n"
)


def test_gowalla_reads_every_check_in_and_filters_the_box(tmp_path):
    path = tmp_path / "loc-gowalla_totalCheckins.txt"
    path.write_text(GOWALLA)
    data = read_gowalla(path)
    assert data.name == "gowalla" and len(data) == 3
    assert data.latlon[0] == pytest.approx([30.2359091167, -97.7951395833])
    assert data.users.tolist() == ["0", "0", "7"]
    sf = read_gowalla(path, box=GOWALLA_SF_BOX)
    assert sf.latlon.tolist() == [[37.6, -122.45], [37.75, -122.40]] and sf.users.tolist() == ["0", "7"]
    unit = sf.unit_box(GOWALLA_SF_BOX)
    assert np.all(np.abs(unit) <= 1.0)
    assert unit[0] == pytest.approx([2 * (-122.45 + 122.51) / 0.13 - 1, 2 * (37.6 - 37.54) / 0.25 - 1])


def test_gzipped_gowalla_is_detected_from_its_bytes(tmp_path):
    path = tmp_path / "checkins.txt"  # no .gz suffix: detected from the magic bytes
    path.write_bytes(gzip.compress(GOWALLA.encode()))
    assert len(read_gowalla(path)) == 3


def test_foursquare_reads_tsmc2014_and_skips_a_header(tmp_path):
    path = tmp_path / "dataset_TSMC2014_NYC.txt"
    path.write_text(FOURSQUARE)
    data = read_foursquare(path)
    assert data.name == "foursquare" and data.users.tolist() == ["470", "979"]
    assert data.latlon[1] == pytest.approx([40.60679958140643, -74.04416981025437])
    header = "userId\tvenueId\tvenueCategoryId\tvenueCategory\tlatitude\tlongitude\ttimezoneOffset\tutcTimestamp\n"
    path.write_text(header + FOURSQUARE)
    assert len(read_foursquare(path)) == 2


@pytest.mark.parametrize(
    "line, message",
    [
        (
            "0\t2010-10-19T23:55:27Z\t30.2\t-97.7\n",
            r"checkins.txt:2: a gowalla line has 5 tab-separated fields \(user, check-in time, latitude, longitude, location id\), got 4",
        ),
        (
            "0\t2010-10-19T23:55:27Z\tnorth\t-97.7\t1\n",
            r"checkins.txt:2: field 3 \(latitude\) is 'north'; allowed: a number in \[-90, 90\]",
        ),
        (
            "0\t2010-10-19T23:55:27Z\t30.2\t-197.7\t1\n",
            r"checkins.txt:2: field 4 \(longitude\) is '-197.7'; allowed: a number in \[-180, 180\]",
        ),
        ("0\t2010-10-19T23:55:27Z\tnan\t-97.7\t1\n", r"checkins.txt:2: field 3 \(latitude\) is 'nan'"),
        ("0 2010-10-19T23:55:27Z 30.2 -97.7 1\n", r"got 1: '0 2010"),  # spaces, not tabs
    ],
)
def test_malformed_gowalla_names_file_line_field_and_what_is_allowed(tmp_path, line, message):
    path = tmp_path / "checkins.txt"
    path.write_text("0\t2010-10-19T23:55:27Z\t30.2\t-97.7\t1\n" + line)
    with pytest.raises(DataError, match=message):
        read_gowalla(path)


def test_malformed_foursquare_and_missing_files(tmp_path):
    path = tmp_path / "nyc.txt"
    path.write_text(FOURSQUARE.replace("40.60679958140643", "40,6068"))
    with pytest.raises(
        DataError, match=r"nyc.txt:2: field 5 \(latitude\) is '40,6068'; allowed: a number in \[-90, 90\]"
    ):
        read_foursquare(path)
    with pytest.raises(DataError, match=r"Foursquare TSMC2014 check-in file not found: expected the file .*absent.txt"):
        read_foursquare(tmp_path / "absent.txt")
    with pytest.raises(DataError, match=r"box must be \(lat_min, lat_max, lon_min, lon_max\)"):
        read_gowalla(path, box=(1, 0, 0, 1))


@pytest.mark.parametrize("text", ["", "\n  \n", "userId\tvenueId\n"])
def test_a_file_without_check_ins_is_refused_naming_it(tmp_path, text):
    path = tmp_path / "empty.txt"
    path.write_text(text)
    for reader, name in ((read_gowalla, "gowalla"), (read_foursquare, "foursquare")):
        if name == "gowalla" and text.startswith("userId"):
            continue  # not a Gowalla header: a malformed line, refused as such
        with pytest.raises(DataError, match=rf"empty.txt: no {name} check-in in the file .*tab-separated fields"):
            reader(path)


def test_austin_stand_in_is_named_as_a_substitute(tmp_path):
    path = tmp_path / "austin.csv"
    path.write_text(",LATITUDE,LONGITUDE\n0,30.0,-97.0\n1,30.5,-97.5\n")
    data = austin_checkins(path)
    assert data.name == AUSTIN_SUBSTITUTE_NAME and "substitute" in data.name and len(data) == 2


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_idx_round_trip(tmp_path, gz, mnist_files):
    images, labels = mnist_files(tmp_path, gz=gz)
    data = load_mnist(tmp_path / "train-images-idx3-ubyte", tmp_path / "train-labels-idx1-ubyte")
    assert data.name == "mnist" and data.images.shape == (5, 28, 28)
    assert np.array_equal(data.images, images / 255.0) and np.array_equal(data.labels, labels)


def test_read_idx_handles_other_types_in_native_order(tmp_path, idx_bytes):
    path = tmp_path / "x.idx"
    path.write_bytes(idx_bytes(0x0B, np.array([[-2, 300], [7, 0]])))
    out = read_idx(path)
    assert out.dtype == np.int16 and out.dtype.isnative and out.tolist() == [[-2, 300], [7, 0]]
    path.write_bytes(idx_bytes(0x0D, np.array([1.5, -0.25])))
    assert read_idx(path).tolist() == [1.5, -0.25]


@pytest.mark.parametrize(
    "payload, message",
    [
        (b"\x00\x00", r"starts with a 4-byte magic number, the file has 2 bytes"),
        (
            b"\x01\x00\x08\x01\x00\x00\x00\x01\x05",
            r"magic number 01 00 08 01 is not IDX; allowed: 00 00 <type> <ndim> with type one of 0x08",
        ),
        (b"\x00\x00\x07\x01\x00\x00\x00\x01\x05", r"magic number 00 00 07 01 is not IDX"),
        (b"\x00\x00\x08\x03\x00\x00\x00\x01", r"the header announces 3 dimensions \(16 bytes\), the file has 8 bytes"),
        (
            b"\x00\x00\x08\x01\x00\x00\x00\x03\x05\x06",
            r"announces shape \(3,\) of uint8 \(3 bytes of data\), the file holds 2 bytes after the header \(truncated\)",
        ),
        (b"\x00\x00\x08\x01\x00\x00\x00\x01\x05\x06", r"\(trailing bytes\)"),
        (b"\x1f\x8b\x08\x00garbage", r"starts like gzip but does not decompress"),
    ],
)
def test_malformed_idx_is_a_named_error(tmp_path, payload, message):
    path = tmp_path / "bad-idx"
    path.write_bytes(payload)
    with pytest.raises(DataError, match=message):
        read_idx(path)


def test_mnist_pairs_are_checked(tmp_path, mnist_files, idx_bytes):
    mnist_files(tmp_path)
    img, lab = tmp_path / "train-images-idx3-ubyte", tmp_path / "train-labels-idx1-ubyte"
    with pytest.raises(
        DataError, match=r"MNIST images must be a 3-d unsigned-byte IDX \(magic 00 00 08 03\), got 1-d uint8"
    ):
        load_mnist(lab, lab)
    with pytest.raises(
        DataError, match=r"MNIST labels must be a 1-d unsigned-byte IDX \(magic 00 00 08 01\), got 3-d uint8"
    ):
        load_mnist(img, img)
    (tmp_path / "three").write_bytes(idx_bytes(0x08, np.array([1, 2, 3])))
    with pytest.raises(DataError, match=r"holds 5 images but .*three holds 3 labels"):
        load_mnist(img, tmp_path / "three")
    (tmp_path / "big").write_bytes(idx_bytes(0x08, np.array([1, 2, 12, 3, 4])))
    with pytest.raises(DataError, match=r"label 2 is 12; allowed: 0..9"):
        load_mnist(img, tmp_path / "big")


def test_mnist_or_digits_uses_files_when_present_and_names_the_stand_in_otherwise(tmp_path, mnist_files):
    (tmp_path / "mnist").mkdir()
    stand_in = mnist_or_digits(root=tmp_path)
    assert stand_in.name == DIGITS_SUBSTITUTE_NAME and stand_in.images.shape == (1797, 8, 8)
    assert stand_in.images.max() == 1.0
    mnist_files(tmp_path / "mnist", gz=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        (tmp_path / "mnist" / name).rename(tmp_path / "mnist" / f"{name}.gz")
    assert mnist_or_digits(root=tmp_path).name == "mnist"
    (tmp_path / "mnist" / "train-labels-idx1-ubyte.gz").unlink()  # half a pair is an error, not a fallback
    with pytest.raises(DataError, match="IDX file not found"):
        mnist_or_digits(root=tmp_path)
    with pytest.raises(DataError, match="give both images_path and labels_path"):
        mnist_or_digits(images_path=tmp_path / "x")
    with pytest.raises(DataError, match="split must be 'train' or 'test', got 'val'"):
        mnist_or_digits(split="val", root=tmp_path)
