#!/usr/bin/python3
"""read_events.py FILE [--flip OFFSET]

An independent reader of TensorBoard event files, for moonflow's tests:
TFRecord framing checked with python3-crcmod's CRC-32C (every length and
data CRC, masked as TensorFlow masks them), every record decoded with
python3-protobuf as tensorflow.Event. TensorFlow's .proto files are not
installed, so the few message types are declared here with descriptor_pb2,
field numbers from event.proto, summary.proto, graph.proto, node_def.proto,
attr_value.proto, tensor_shape.proto and versions.proto.

Prints one line per event:
  version brain.Event:2
  scalar TAG STEP VALUE
  histogram TAG STEP num=N min=A max=B sum=S buckets=K
  graph NODES forward=F gradients=G
and exits 1 (with a message on stderr) at the first bad CRC, truncated
record, undecodable event or inconsistent histogram.
--flip OFFSET: reads a copy with the byte at OFFSET flipped instead and
exits 0 only when the reader rejects it."""
import re
import sys
import crcmod.predefined
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

crc32c = crcmod.predefined.mkCrcFun('crc-32c')
F = descriptor_pb2.FieldDescriptorProto


def masked(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xffffffff) + 0xa282ead8) & 0xffffffff


def field(msg, name, number, ftype, label=F.LABEL_OPTIONAL, type_name=None, packed=False):
    f = msg.field.add(name=name, number=number, type=ftype, label=label)
    if type_name:
        f.type_name = type_name
    if packed:
        f.options.packed = True


def build_classes():
    fd = descriptor_pb2.FileDescriptorProto(name='mf_tb_reader.proto', package='tensorflow',
                                            syntax='proto3')
    rep = F.LABEL_REPEATED
    dim = fd.message_type.add(name='Dim')
    field(dim, 'size', 1, F.TYPE_INT64)
    field(dim, 'name', 2, F.TYPE_STRING)
    shape = fd.message_type.add(name='TensorShapeProto')
    field(shape, 'dim', 2, F.TYPE_MESSAGE, rep, '.tensorflow.Dim')
    field(shape, 'unknown_rank', 3, F.TYPE_BOOL)
    lst = fd.message_type.add(name='ListValue')
    field(lst, 's', 2, F.TYPE_BYTES, rep)
    field(lst, 'i', 3, F.TYPE_INT64, rep, packed=True)
    field(lst, 'f', 4, F.TYPE_FLOAT, rep, packed=True)
    field(lst, 'b', 5, F.TYPE_BOOL, rep, packed=True)
    field(lst, 'type', 6, F.TYPE_INT32, rep, packed=True)
    field(lst, 'shape', 7, F.TYPE_MESSAGE, rep, '.tensorflow.TensorShapeProto')
    attr = fd.message_type.add(name='AttrValue')
    field(attr, 'list', 1, F.TYPE_MESSAGE, type_name='.tensorflow.ListValue')
    field(attr, 's', 2, F.TYPE_BYTES)
    field(attr, 'i', 3, F.TYPE_INT64)
    field(attr, 'f', 4, F.TYPE_FLOAT)
    field(attr, 'b', 5, F.TYPE_BOOL)
    field(attr, 'type', 6, F.TYPE_INT32)
    field(attr, 'shape', 7, F.TYPE_MESSAGE, type_name='.tensorflow.TensorShapeProto')
    node = fd.message_type.add(name='NodeDef')
    entry = node.nested_type.add(name='AttrEntry')
    entry.options.map_entry = True
    field(entry, 'key', 1, F.TYPE_STRING)
    field(entry, 'value', 2, F.TYPE_MESSAGE, type_name='.tensorflow.AttrValue')
    field(node, 'name', 1, F.TYPE_STRING)
    field(node, 'op', 2, F.TYPE_STRING)
    field(node, 'input', 3, F.TYPE_STRING, rep)
    field(node, 'device', 4, F.TYPE_STRING)
    field(node, 'attr', 5, F.TYPE_MESSAGE, rep, '.tensorflow.NodeDef.AttrEntry')
    ver = fd.message_type.add(name='VersionDef')
    field(ver, 'producer', 1, F.TYPE_INT32)
    field(ver, 'min_consumer', 2, F.TYPE_INT32)
    graph = fd.message_type.add(name='GraphDef')
    field(graph, 'node', 1, F.TYPE_MESSAGE, rep, '.tensorflow.NodeDef')
    field(graph, 'versions', 4, F.TYPE_MESSAGE, type_name='.tensorflow.VersionDef')
    histo = fd.message_type.add(name='HistogramProto')
    for i, n in enumerate(['min', 'max', 'num', 'sum', 'sum_squares']):
        field(histo, n, i + 1, F.TYPE_DOUBLE)
    field(histo, 'bucket_limit', 6, F.TYPE_DOUBLE, rep, packed=True)
    field(histo, 'bucket', 7, F.TYPE_DOUBLE, rep, packed=True)
    value = fd.message_type.add(name='SummaryValue')
    field(value, 'tag', 1, F.TYPE_STRING)
    field(value, 'simple_value', 2, F.TYPE_FLOAT)
    field(value, 'histo', 5, F.TYPE_MESSAGE, type_name='.tensorflow.HistogramProto')
    field(value, 'node_name', 7, F.TYPE_STRING)
    summary = fd.message_type.add(name='Summary')
    field(summary, 'value', 1, F.TYPE_MESSAGE, rep, '.tensorflow.SummaryValue')
    event = fd.message_type.add(name='Event')
    field(event, 'wall_time', 1, F.TYPE_DOUBLE)
    field(event, 'step', 2, F.TYPE_INT64)
    field(event, 'file_version', 3, F.TYPE_STRING)
    field(event, 'graph_def', 4, F.TYPE_BYTES)
    field(event, 'summary', 5, F.TYPE_MESSAGE, type_name='.tensorflow.Summary')
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    factory = message_factory.MessageFactory(pool)

    def cls(name):
        d = pool.FindMessageTypeByName('tensorflow.' + name)
        get = getattr(message_factory, 'GetMessageClass', None)
        return get(d) if get else factory.GetPrototype(d)
    return cls('Event'), cls('GraphDef')


def records(data):
    pos = 0
    while pos < len(data):
        if len(data) - pos < 12:
            raise ValueError('record at byte %d: truncated header' % pos)
        head = data[pos:pos + 8]
        if masked(head) != int.from_bytes(data[pos + 8:pos + 12], 'little'):
            raise ValueError('record at byte %d: length CRC mismatch' % pos)
        n = int.from_bytes(head, 'little')
        body = data[pos + 12:pos + 12 + n]
        tail = data[pos + 12 + n:pos + 16 + n]
        if len(body) != n or len(tail) != 4:
            raise ValueError('record at byte %d: truncated' % pos)
        if masked(body) != int.from_bytes(tail, 'little'):
            raise ValueError('record at byte %d: data CRC mismatch' % pos)
        yield body
        pos += 16 + n


def check_histogram(tag, h):
    if len(h.bucket) != len(h.bucket_limit) or not h.bucket:
        raise ValueError('histogram %s: %d limits for %d buckets' %
                         (tag, len(h.bucket_limit), len(h.bucket)))
    if any(b <= a for a, b in zip(h.bucket_limit, h.bucket_limit[1:])):
        raise ValueError('histogram %s: bucket limits do not increase' % tag)
    if sum(h.bucket) != h.num:
        raise ValueError('histogram %s: buckets hold %g values, num is %g' %
                         (tag, sum(h.bucket), h.num))
    if h.num and not (h.min <= h.max):
        raise ValueError('histogram %s: min %g > max %g' % (tag, h.min, h.max))


def describe(event, graph_cls):
    if event.file_version:
        return 'version %s' % event.file_version
    if event.graph_def:
        g = graph_cls()
        g.ParseFromString(event.graph_def)
        names = {n.name for n in g.node}
        for n in g.node:
            for i in n.input:
                src = i.lstrip('^').split(':')[0]
                if src not in names:
                    raise ValueError('graph: node %s reads unknown node %s' % (n.name, src))
        grads = sum(1 for n in g.node if n.name.startswith('gradients/'))
        return 'graph %d forward=%d gradients=%d' % (len(g.node), len(g.node) - grads, grads)
    out = []
    for v in event.summary.value:
        if v.HasField('histo'):
            h = v.histo
            check_histogram(v.tag, h)
            out.append('histogram %s %d num=%g min=%g max=%g sum=%.6g buckets=%d' %
                       (v.tag, event.step, h.num, h.min, h.max, h.sum, len(h.bucket)))
        else:
            out.append('scalar %s %d %.9g' % (v.tag, event.step, v.simple_value))
    if not out:
        raise ValueError('an event with nothing in it')
    return '\n'.join(out)


def read(path, data):
    if not re.search(r'events\.out\.tfevents\.\d{10}\.[^/]+$', path):
        raise ValueError('%s: not named events.out.tfevents.<time>.<host>' % path)
    event_cls, graph_cls = build_classes()
    lines = []
    for k, body in enumerate(records(data)):
        e = event_cls()
        e.ParseFromString(body)
        if k == 0 and e.file_version != 'brain.Event:2':
            raise ValueError('the first event is not the version event brain.Event:2')
        if e.wall_time <= 1e9:
            raise ValueError('event %d: implausible wall_time %r' % (k, e.wall_time))
        lines.append(describe(e, graph_cls))
    if not lines:
        raise ValueError('no events')
    return lines


def main():
    path = sys.argv[1]
    data = open(path, 'rb').read()
    if len(sys.argv) > 3 and sys.argv[2] == '--flip':
        off = int(sys.argv[3])
        bad = bytearray(data)
        bad[off] ^= 0x20
        try:
            read(path, bytes(bad))
        except Exception as e:   # any rejection counts: CRC, framing or decoding
            print('rejected: %s' % e)
            return 0
        print('the byte flipped at %d was NOT detected' % off, file=sys.stderr)
        return 1
    try:
        for line in read(path, data):
            print(line)
    except Exception as e:
        print('read_events: %s: %s' % (path, e), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
