import re,sys,statistics
runs=sys.argv[1:]
data={}
for i,f in enumerate(runs):
    sc=None
    for line in open(f):
        m=re.match(r'### (\S+):',line)
        if m: sc=m.group(1); continue
        if sc and line.startswith('| ') and not line.startswith('| config'):
            c=[x.strip() for x in line.strip().strip('|').split('|')]
            if len(c)<8: continue
            g=float(c[2].split()[0]); q=c[7].split('/')
            data.setdefault((sc,c[0]),[]).append((g,float(q[0]),float(q[1]),c[6]))
for (sc,cfg),v in sorted(data.items()):
    gs=[x[0] for x in v]; qs=[x[1] for x in v]
    print(f"{sc:9s} {cfg:18s} goodput {' '.join('%.2f'%x for x in gs)} med {statistics.median(gs):.2f} | q50 {' '.join('%.1f'%x for x in qs)} med {statistics.median(qs):.1f} | rtt {' ; '.join(x[3] for x in v)}")
